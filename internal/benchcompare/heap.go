package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"strconv"

	"github.com/lifecyclesim/terraform-provider-lifecycle/internal/freeport"
)

// heapFigure is a server's live heap as its heap profile reports it right after a collection:
// the bytes and objects in use (inuse_space, inuse_objects), and where the profile was saved
// ("" when it was not).
type heapFigure struct {
	InUse, Objects int64
	Saved          string
}

// pprofArgs are the lifecyclesim flags that serve its runtime profiles on a free port, and
// the base URL they are served at.
func pprofArgs() ([]string, string, error) {
	port, err := freeport.Loopback()
	if err != nil {
		return nil, "", err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	return []string{"--pprof-addr", addr}, "http://" + addr + "/debug/pprof/heap", nil
}

// readHeap collects the server's garbage and reads its heap profile twice: as text, for the
// totals in use, and (when save is set) in pprof's format into save, for
// go tool pprof -sample_index=inuse_space.
func readHeap(ctx context.Context, hc *http.Client, url, save string) (heapFigure, error) {
	status, b, err := send(ctx, hc, http.MethodGet, url+"?gc=1&debug=1", nil, nil, true)
	if err != nil {
		return heapFigure{}, fmt.Errorf("heap profile: %w", err)
	}
	if status != http.StatusOK {
		return heapFigure{}, statusError("heap profile", status, b)
	}
	h, err := parseHeapTotals(b)
	if err != nil {
		return heapFigure{}, err
	}
	if save != "" {
		status, p, err := send(ctx, hc, http.MethodGet, url, nil, nil, true)
		if err != nil {
			return heapFigure{}, fmt.Errorf("heap profile: %w", err)
		}
		if status != http.StatusOK {
			return heapFigure{}, statusError("heap profile", status, p)
		}
		if err := os.WriteFile(save, p, 0o644); err != nil {
			return heapFigure{}, err
		}
		h.Saved = save
	}
	return h, nil
}

// parseHeapTotals sums the records of a text heap profile (debug=1) as go tool pprof does:
// after the header ("heap profile: ... @ heap/2×RATE"), a line per stack,
// "INUSE_OBJECTS: INUSE_BYTES [ALLOC_OBJECTS: ALLOC_BYTES] @ PCs", counting the sampled
// allocations, each scaled by the odds that an allocation of its mean size was sampled.
func parseHeapTotals(b []byte) (heapFigure, error) {
	lines := bytes.Split(b, []byte("\n"))
	var h heapFigure
	var objects, inuse, allocObjects, allocBytes, rate int64
	if _, err := fmt.Sscanf(string(lines[0]), "heap profile: %d: %d [%d: %d] @ heap/%d", &objects, &inuse, &allocObjects, &allocBytes, &rate); err != nil {
		return heapFigure{}, fmt.Errorf("heap profile: the first line %.100q is not a heap profile's header: %w", lines[0], err)
	}
	rate /= 2
	for _, l := range lines[1:] {
		if len(l) == 0 || l[0] == '#' {
			continue
		}
		if _, err := fmt.Sscanf(string(l), "%d: %d [%d: %d] @", &objects, &inuse, &allocObjects, &allocBytes); err != nil {
			continue // a stack's frames (debug=1 lists them under the record)
		}
		n, size := scaleHeapSample(objects, inuse, rate)
		h.Objects += n
		h.InUse += size
	}
	return h, nil
}

// scaleHeapSample scales a record's sampled count and bytes to an estimate of all of them
// (as pprof's scaleHeapSample does): an allocation of size s is sampled with probability
// 1 - exp(-s/rate).
func scaleHeapSample(count, size, rate int64) (int64, int64) {
	if count == 0 || size == 0 {
		return 0, 0
	}
	if rate <= 1 {
		return count, size
	}
	scale := 1 / (1 - math.Exp(-float64(size)/float64(count)/float64(rate)))
	return int64(float64(count) * scale), int64(float64(size) * scale)
}
