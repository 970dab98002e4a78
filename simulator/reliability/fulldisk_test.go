package reliability

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/sqlitestore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// A full disk is an outage: every request it fails is a 503 with Retry-After (never a 500),
// nothing acknowledged is lost, and the SQLite store serves again once the disk takes writes,
// without a restart.

// diskTally counts the answers to creates while the disk is full or not.
type diskTally struct {
	tried, ok, unavailable, noRetryAfter, fivexx int
	acked                                        []string // IDs of the acknowledged creates
}

// create POSTs an account and counts the answer.
func (d *diskTally) create(t *testing.T, url string) int {
	t.Helper()
	d.tried++
	body := strings.NewReader(fmt.Sprintf(`{"name":"acct-%d"}`, d.tried))
	resp, err := http.Post(url+"/v1/accounts", "application/json", body)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode/100 == 2:
		var o wire.Object
		if err := json.NewDecoder(resp.Body).Decode(&o); err != nil || o.ID == "" {
			t.Fatalf("create answered %d without an object: %v", resp.StatusCode, err)
		}
		d.ok++
		d.acked = append(d.acked, o.ID)
	case resp.StatusCode == http.StatusServiceUnavailable:
		d.unavailable++
		if resp.Header.Get("Retry-After") == "" {
			d.noRetryAfter++
		}
	case resp.StatusCode >= 500:
		d.fivexx++
	default:
		t.Fatalf("create = %d", resp.StatusCode)
	}
	return resp.StatusCode
}

// lost counts the acknowledged creates the simulator does not serve.
func (d *diskTally) lost(t *testing.T, url string) int {
	t.Helper()
	n := 0
	for _, id := range d.acked {
		resp, err := http.Get(url + "/v1/accounts/" + id)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			n++
		}
	}
	return n
}

// startOnFile serves a SQLite store at path; the store is closed after the simulator.
func startOnFile(t *testing.T, path string) (*sqlitestore.Store, *simtest.Sim) {
	t.Helper()
	s, err := sqlitestore.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, simtest.Start(t, simtest.WithStore(s))
}

// TestFullDiskInjected: ENOSPC injected at the journal's write (every append fails while it
// lasts).
func TestFullDiskInjected(t *testing.T) {
	s, sim := startOnFile(t, filepath.Join(t.TempDir(), "sim.db"))
	n := scale(20, 200)
	var before, during, after diskTally
	for range n {
		before.create(t, sim.URL)
	}
	s.FailWrites(syscall.ENOSPC)
	for range n {
		during.create(t, sim.URL)
	}
	s.FailWrites(nil)
	for range n {
		after.create(t, sim.URL)
	}
	lost := before.lost(t, sim.URL) + after.lost(t, sim.URL)
	r := row{name: "full disk, SQLite (ENOSPC injected at the write)", tried: 3 * n, lost: lost,
		// Not served again (a create failing after the disk took writes), or acknowledged while
		// nothing could be written.
		violations: (n - before.ok) + (n - after.ok) + during.ok + during.noRetryAfter,
		fivexx:     before.fivexx + during.fivexx + after.fivexx,
		note: fmt.Sprintf("during: %d × 503 (%d without Retry-After), %d × 500; after: %d of %d served, no restart",
			during.unavailable, during.noRetryAfter, during.fivexx, after.ok, n)}
	checkRow(t, r)
}

// TestFullDiskTmpfs: a real full disk, a small tmpfs the database lives on, filled by another
// file and then freed. Where mounting is not allowed it says so.
func TestFullDiskTmpfs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := mountTmpfs(dir, "8m"); err != nil {
		record(row{name: "full disk, SQLite on a full tmpfs", note: "skipped: mounting a tmpfs is not allowed here (" + err.Error() + ")"})
		t.Skipf("mounting a tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := unmount(dir); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	_, sim := startOnFile(t, filepath.Join(dir, "sim.db"))
	var d diskTally
	for range 20 {
		d.create(t, sim.URL)
	}
	fill(t, filepath.Join(dir, "filler"))
	// Creates go on until the disk refuses: the journal is written in place within its size, so
	// the first refusals come when it grows or a checkpoint needs room.
	for tries := 0; d.unavailable < 10 && tries < scale(3000, 6000); tries++ {
		d.create(t, sim.URL)
	}
	if err := os.Remove(filepath.Join(dir, "filler")); err != nil {
		t.Fatal(err)
	}
	var after diskTally
	took := simtest.Eventually(t, 30*time.Second, "creates succeed once the disk is freed", func() bool {
		return after.create(t, sim.URL)/100 == 2
	})
	var settled diskTally
	for range 20 {
		settled.create(t, sim.URL)
	}
	r := row{name: "full disk, SQLite on a full tmpfs", tried: d.tried + after.tried + settled.tried,
		lost:       d.lost(t, sim.URL) + after.lost(t, sim.URL) + settled.lost(t, sim.URL),
		violations: d.noRetryAfter + after.noRetryAfter + (20 - settled.ok),
		fivexx:     d.fivexx + after.fivexx + settled.fivexx,
		note: fmt.Sprintf("8 MiB tmpfs filled: %d × 2xx, %d × 503 (%d without Retry-After), %d × 500; served again %s after the disk was freed, no restart",
			d.ok, d.unavailable, d.noRetryAfter, d.fivexx, took.Round(time.Millisecond))}
	if d.unavailable == 0 {
		r.violations++
		r.note += "; the disk never refused a write"
	}
	checkRow(t, r)
}

// fill writes path until the file system is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
}
