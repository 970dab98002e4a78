//go:build race

package kindgen

// raceEnabled: the race detector slows the loader about twenty times and finds nothing in this
// single-goroutine code, so the race run (make test) loads fewer seeds.
const raceEnabled = true
