package provider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

func TestUserAgent(t *testing.T) {
	tests := []struct {
		name, terraform, provider, want string
	}{
		{name: "terraform says its version", terraform: "1.11.4", provider: "0.1.0", want: "Terraform/1.11.4 terraform-provider-lifecycle/0.1.0"},
		{name: "prerelease terraform", terraform: "1.15.9-dev", provider: "dev", want: "Terraform/1.15.9-dev terraform-provider-lifecycle/dev"},
		{name: "no terraform version", terraform: "", provider: "0.1.0", want: "terraform-provider-lifecycle/0.1.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := userAgent(tt.terraform, tt.provider); got != tt.want {
				t.Errorf("userAgent(%q, %q) = %q, want %q", tt.terraform, tt.provider, got, tt.want)
			}
		})
	}
}

// TestAccUserAgentNamesTerraform: every request the provider sends while terraform plans and
// applies names the Terraform that runs it and the provider's version, as the AWS and Google
// providers do.
func TestAccUserAgentNamesTerraform(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	sim := newTestSim(t, withMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen[r.UserAgent()]++
			mu.Unlock()
			next.ServeHTTP(w, r)
		})
	}))
	check := func(*terraform.State) error {
		want := "Terraform/" + terraformVersion(t) + " terraform-provider-lifecycle/test"
		mu.Lock()
		defer mu.Unlock()
		if len(seen) != 1 || seen[want] == 0 {
			return fmt.Errorf("User-Agents of the provider's requests = %v, want only %q", seen, want)
		}
		return nil
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProviders,
		Steps: []resource.TestStep{{
			Config: sim.config(`
resource "lifecycle_image" "img" {
  name = "ubuntu"
}
`),
			Check: check,
		}},
	})
}

// terraformVersion is the version of the terraform on PATH (the one the acceptance tests run).
func terraformVersion(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("terraform", "version", "-json").Output()
	if err != nil {
		t.Fatalf("terraform version -json: %v", err)
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal(out, &v); err != nil || v.Version == "" {
		t.Fatalf("terraform version -json = %s: %v", out, err)
	}
	return v.Version
}
