package reliability

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore/pgtest"
)

// row is one line of the suite's table.
type row struct {
	name                                    string
	tried, lost, violations, fivexx, panics int
	// note says what the row's lost and violations count, and any figure of its own (a p99).
	note string
}

var (
	tableMu sync.Mutex
	table   []row
)

func record(r row) {
	tableMu.Lock()
	defer tableMu.Unlock()
	table = append(table, r)
}

// full reports whether to run the full suite (make reliability) rather than the short one.
func full() bool { return os.Getenv("RELIABILITY") == "full" }

// scale picks the short or the full size of a workload.
func scale(short, long int) int {
	if full() {
		return long
	}
	return short
}

func renderTable() string {
	tableMu.Lock()
	defer tableMu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%-54s %9s %6s %11s %6s %7s  %s\n", "check", "tried", "lost", "violations", "5xx", "panics", "what lost / violations count")
	var sum row
	for _, r := range table {
		fmt.Fprintf(&b, "%-54s %9d %6d %11d %6d %7d  %s\n", r.name, r.tried, r.lost, r.violations, r.fivexx, r.panics, r.note)
		sum.tried += r.tried
		sum.lost += r.lost
		sum.violations += r.violations
		sum.fivexx += r.fivexx
		sum.panics += r.panics
	}
	fmt.Fprintf(&b, "%-54s %9d %6d %11d %6d %7d\n", "total", sum.tried, sum.lost, sum.violations, sum.fivexx, sum.panics)
	return b.String()
}

// TestMain writes the table once every check has run: to $RELIABILITY_REPORT when set. The
// PostgreSQL checks share a throwaway cluster, stopped once they have run (package pgtest).
func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	if p := os.Getenv("RELIABILITY_REPORT"); p != "" {
		if err := os.WriteFile(p, []byte(renderTable()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// fail marks a row's figures as failures of the test.
func checkRow(t *testing.T, r row) {
	t.Helper()
	record(r)
	if r.lost+r.violations+r.fivexx+r.panics > 0 {
		t.Errorf("%s: lost %d, violations %d, 5xx %d, panics %d; want all 0", r.name, r.lost, r.violations, r.fivexx, r.panics)
	}
}
