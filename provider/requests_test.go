package provider

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// requestCounter counts the requests a simulator serves, by method and path; long polls
// (?wait=static) are counted apart, as "WAIT path".
type requestCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *requestCounter) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Method + " " + r.URL.Path
		if r.Method == http.MethodGet && r.URL.Query().Get("wait") != "" {
			key = "WAIT " + r.URL.Path
		}
		c.mu.Lock()
		c.n[key]++
		c.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (c *requestCounter) reset() {
	c.mu.Lock()
	c.n = map[string]int{}
	c.mu.Unlock()
}

// count sums the requests whose key starts with prefix.
func (c *requestCounter) count(prefix string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	sum := 0
	for k, v := range c.n {
		if strings.HasPrefix(k, prefix) {
			sum += v
		}
	}
	return sum
}

func machinesConfig(n int, status string) string {
	return networkConfig + fmt.Sprintf(`
resource "lifecycle_machine" "m" {
  count         = %d
  name          = "m${count.index}"
  cloudspace_id = lifecycle_cloudspace.cs.id
  image_id      = lifecycle_image.img.id
  status        = %q
}
`, n, status)
}

// TestAccChildrenReadTheirParentOncePerRun: planning and applying many machines of one
// cloudspace reads the cloudspace at most once per Terraform run (each plan or apply the
// provider serves), not once per machine; and each transition costs one request: the action,
// whose answer goes on until the machine is static (?wait=static).
func TestAccChildrenReadTheirParentOncePerRun(t *testing.T) {
	const n = 8
	counter := &requestCounter{n: map[string]int{}}
	sim := newTestSim(t, withMiddleware(counter.middleware))
	var csID string
	// checkRequests checks the requests of the step so far; runs counts the configured
	// providers (each asks for the kinds once).
	checkRequests := func(action string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			runs := counter.count("GET /v1/kinds")
			if got := counter.count("GET /v1/cloudspaces/" + csID); got > runs {
				return fmt.Errorf("the cloudspace of %d machines was read %d times in %d provider runs; want at most once a run", n, got, runs)
			}
			if got := counter.count("GET /v1/accounts/"); got > runs {
				return fmt.Errorf("the account (which no machine's guard names) was read %d times in %d provider runs; want at most once a run", got, runs)
			}
			// The action: a create is POST /v1/machines, a stop POST /v1/machines/ID/actions/stop.
			posts := counter.count("POST /v1/machines")
			waits := counter.count("WAIT /v1/machines/")
			if posts != n || waits != 0 {
				return fmt.Errorf("%d machines' %s took %d POSTs and %d long polls; want %d POSTs and no long poll (one request a transition)", n, action, posts, waits, n)
			}
			return nil
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{
			{
				Config: sim.config(networkConfig),
				Check:  captureID("lifecycle_cloudspace.cs", &csID),
			},
			{
				// Machines created in a cloudspace that exists: its ID is known at plan time.
				PreConfig: counter.reset,
				Config:    sim.config(machinesConfig(n, "RUNNING")),
				Check:     checkRequests("create"),
			},
			{
				// Stopping them: the stop's guard looks at the cloudspace at plan time.
				PreConfig: counter.reset,
				Config:    sim.config(machinesConfig(n, "HALTED")),
				Check:     checkRequests("stop"),
			},
		},
	})
}
