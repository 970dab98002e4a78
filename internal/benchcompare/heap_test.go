package main

import (
	"bytes"
	"runtime"
	"runtime/pprof"
	"testing"
)

// The live heap read from a text heap profile is the sampled records scaled up as pprof
// scales them: 32 MiB held in 256-byte blocks read as about 32 MiB, where the raw samples
// count a few kilobytes.
func TestParseHeapTotals(t *testing.T) {
	const size, n = 256, 32 << 20 / 256
	held := make([][]byte, n)
	for i := range held {
		held[i] = make([]byte, size)
	}
	runtime.GC()
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 1); err != nil {
		t.Fatal(err)
	}
	h, err := parseHeapTotals(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi := int64(size*n*6/10), int64(size*n*16/10)+8<<20; h.InUse < lo || h.InUse > hi {
		t.Errorf("parseHeapTotals: %d bytes in use, want %d-%d (%d held)", h.InUse, lo, hi, size*n)
	}
	if h.Objects < n/2 {
		t.Errorf("parseHeapTotals: %d objects in use, want at least %d", h.Objects, n/2)
	}
	runtime.KeepAlive(held)

	if _, err := parseHeapTotals([]byte("goroutine profile: total 3\n")); err == nil {
		t.Error("parseHeapTotals(a goroutine profile) = nil error, want one")
	}
}
