//go:build race

package dashboard_test

// raceEnabled: the race detector slows the server several times, so the figures of
// TestBrowserTenThousand are measured by the run without -race.
const raceEnabled = true
