package engine

import "sync"

// hub wakes long-polls when an object changes.
type hub struct {
	mu sync.Mutex
	m  map[string]*watchers
}

// watchers share one channel, closed at the object's next change.
type watchers struct {
	ch chan struct{}
	n  int
}

// watch returns a channel closed at the object's next change, and a release to call when the
// caller stops waiting (so entries for objects nobody waits on do not pile up).
func (h *hub) watch(id string) (<-chan struct{}, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w, ok := h.m[id]
	if !ok {
		w = &watchers{ch: make(chan struct{})}
		h.m[id] = w
	}
	w.n++
	return w.ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.m[id] == w {
			if w.n--; w.n == 0 {
				delete(h.m, id)
			}
		}
	}
}

func (h *hub) notify(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w, ok := h.m[id]; ok {
		close(w.ch)
		delete(h.m, id)
	}
}

// waiting is the number of watchers of every object.
func (h *hub) waiting() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, w := range h.m {
		n += w.n
	}
	return n
}

// notifyAll wakes every long-poll (they read their object again): another replica's changes
// may have been missed.
func (h *hub) notifyAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, w := range h.m {
		close(w.ch)
		delete(h.m, id)
	}
}
