package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
)

// httpc is the workload's client: short timeouts, so a killed server does not stall it.
var httpc = &http.Client{Timeout: 5 * time.Second}

func call(method, url string, body any) (int, []byte, error) {
	return callWith(method, url, body, nil)
}

// callWith is call with extra headers.
func callWith(method, url string, body any, header map[string]string) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := httpc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// sim is a lifecyclesim process on a SQLite file, or on a PostgreSQL database when postgres
// is set (a replica).
type sim struct {
	bin, db, addr string
	postgres      string
	cmd           *exec.Cmd
	exited        chan struct{} // closed once cmd has exited
}

func (s *sim) url(path string) string { return "http://" + s.addr + path }

// start starts the process and waits until it is ready. freeAddr's port is free when picked,
// not when the process binds it: on a busy machine another process's connection can take it
// meanwhile. A first start whose process exits before it is ready tries again on another
// free address; a restart keeps its address (the workload is sending to it), so that window
// is the moment between a kill and its restart.
func (s *sim) start(t *testing.T) {
	t.Helper()
	first := s.cmd == nil
	for try := 1; ; try++ {
		if s.run(t) {
			return
		}
		if !first || try == 3 {
			t.Fatalf("lifecyclesim exited before it was ready on %s (its log is above)", s.addr)
		}
		t.Logf("lifecyclesim exited before it was ready on %s: starting it on another free address", s.addr)
		s.addr = freeAddr(t)
	}
}

// run starts the process and reports whether it became ready (false: it exited first).
func (s *sim) run(t *testing.T) bool {
	t.Helper()
	store := []string{"--db", s.db}
	if s.postgres != "" {
		store = []string{"--postgres", s.postgres}
	}
	s.cmd = exec.Command(s.bin, append([]string{"--addr", s.addr, "--time-scale", "0.01", "--log-level", "error"}, store...)...)
	s.cmd.Stderr = os.Stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd, exited := s.cmd, make(chan struct{})
	s.exited = exited
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	ready := false
	simtest.Eventually(t, time.Minute, "lifecyclesim ready on "+s.addr, func() bool {
		select {
		case <-exited:
			return true
		default:
		}
		st, _, err := call(http.MethodGet, s.url("/readyz"), nil)
		ready = err == nil && st == http.StatusOK
		return ready
	})
	return ready
}

func (s *sim) kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
}

// signal sends the process a signal (SIGSTOP freezes it, SIGCONT thaws it).
func (s *sim) signal(sig syscall.Signal) { _ = s.cmd.Process.Signal(sig) }

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// buildSim builds lifecyclesim once per run.
func buildSim(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lifecyclesim")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/lifecyclesim").CombinedOutput()
	if err != nil {
		t.Fatalf("go build lifecyclesim: %v\n%s", err, out)
	}
	return bin
}

// ledger is what the server acknowledged: objects it created and operations it started.
type ledger struct {
	mu      sync.Mutex
	objects []string
	ops     map[string]string // operation ID → object ID
}

// TestCrashLedger runs a workload against a lifecyclesim it kills with SIGKILL at random
// moments, and checks after the last restart that every acknowledged create and action is in
// the store (the object, and its operation in the object's history), and that every history
// is gapless and chains.
func TestCrashLedger(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a process")
	}
	s := &sim{bin: buildSim(t), db: filepath.Join(t.TempDir(), "sim.db"), addr: freeAddr(t)}
	s.start(t)
	defer func() { s.kill() }()
	st, body, err := call(http.MethodPost, s.url("/v1/accounts"), client.CreateRequest{Name: "acme"})
	if err != nil || st != http.StatusCreated {
		t.Fatalf("create account = %d %s %v", st, body, err)
	}
	var acct client.Object
	_ = json.Unmarshal(body, &acct)

	l := &ledger{objects: []string{acct.ID}, ops: map[string]string{}}
	var tried, fivexx atomic.Int64
	kills := scale(3, 40)
	rng := rand.New(rand.NewPCG(1, 2))
	for k := 0; k <= kills; k++ {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				workload(ctx, s, acct.ID, l, uint64(k*10+w), &tried, &fivexx)
			}()
		}
		time.Sleep(time.Duration(200+rng.IntN(600)) * time.Millisecond) // the workload runs; the kill comes at a random moment
		if k < kills {
			s.kill()
		}
		cancel()
		wg.Wait()
		if k < kills {
			s.start(t)
		}
	}

	lost, violations := 0, 0
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range l.objects {
		st, _, err := call(http.MethodGet, s.url("/v1/"+collectionOf(id, acct.ID)+"/"+id), nil)
		if err != nil || st != http.StatusOK {
			lost++
			t.Errorf("acknowledged object %s: %d %v", id, st, err)
		}
	}
	seen := map[string]map[string]bool{}
	for _, id := range l.objects {
		st, body, err := call(http.MethodGet, s.url("/v1/"+collectionOf(id, acct.ID)+"/"+id+"/events"), nil)
		if err != nil || st != http.StatusOK {
			continue
		}
		var evs client.EventList
		_ = json.Unmarshal(body, &evs)
		seen[id] = map[string]bool{}
		for i, e := range evs.Items {
			seen[id][e.OperationID] = true
			if e.Seq != int64(i+1) || (i > 0 && e.From != evs.Items[i-1].To) {
				violations++
				t.Errorf("%s: event %d (seq %d) %s→%s does not follow %+v", id, i, e.Seq, e.From, e.To, evs.Items[max(i-1, 0)])
			}
		}
	}
	for op, id := range l.ops {
		if !seen[id][op] {
			lost++
			t.Errorf("acknowledged operation %s on %s is not in its history", op, id)
		}
	}
	checkRow(t, row{name: fmt.Sprintf("kill -9 (%d kills)", kills), tried: int(tried.Load()), lost: lost, violations: violations, fivexx: int(fivexx.Load())})
}

func collectionOf(id, account string) string {
	if id == account {
		return "accounts"
	}
	return "cloudspaces"
}

// workload creates cloudspaces and runs actions on them until ctx ends, writing every
// acknowledged create and action into the ledger.
func workload(ctx context.Context, s *sim, account string, l *ledger, seed uint64, tried, fivexx *atomic.Int64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	actions := []string{"disable", "enable", "pause", "delete", "restore"}
	for ctx.Err() == nil {
		tried.Add(1)
		var st int
		var body []byte
		var err error
		l.mu.Lock()
		n := len(l.objects)
		target := l.objects[rng.IntN(n)]
		l.mu.Unlock()
		if n < 20 || rng.IntN(4) == 0 || target == account {
			st, body, err = call(http.MethodPost, s.url("/v1/cloudspaces"), client.CreateRequest{Name: "cs", ParentID: account})
		} else {
			st, body, err = call(http.MethodPost, s.url("/v1/cloudspaces/"+target+"/actions/"+actions[rng.IntN(len(actions))]), nil)
		}
		if err != nil {
			continue // the server was killed: not acknowledged
		}
		if st >= 500 {
			fivexx.Add(1)
		}
		if st != http.StatusAccepted && st != http.StatusCreated {
			continue
		}
		var o client.Object
		if json.Unmarshal(body, &o) != nil {
			continue
		}
		l.mu.Lock()
		if o.ID != target {
			l.objects = append(l.objects, o.ID)
		}
		if o.Operation != nil {
			l.ops[o.Operation.ID] = o.ID
		}
		l.mu.Unlock()
	}
}
