package dashboard

import (
	"context"
	"sync"
)

// openStreams are the event streams this handler serves, by session, so that a sign-out here
// ends them before it is answered: after the sign-out's answer none of them sends another
// change. (A sign-out through another replica sharing the sessions is seen when a stream
// rechecks its session, before it sends its next change.)
type openStreams struct {
	mu        sync.Mutex
	bySession map[string]map[*openStream]struct{}
}

// openStream is one stream's sending side: a change is written under mu, and only while the
// session has not been ended here.
type openStream struct {
	mu     sync.Mutex
	ended  bool
	cancel context.CancelFunc
}

// add registers a stream of the session; the returned func removes it.
func (o *openStreams) add(key []byte, cancel context.CancelFunc) (*openStream, func()) {
	st := &openStream{cancel: cancel}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.bySession == nil {
		o.bySession = map[string]map[*openStream]struct{}{}
	}
	k := string(key)
	if o.bySession[k] == nil {
		o.bySession[k] = map[*openStream]struct{}{}
	}
	o.bySession[k][st] = struct{}{}
	return st, func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		delete(o.bySession[k], st)
		if len(o.bySession[k]) == 0 {
			delete(o.bySession, k)
		}
	}
}

// end ends the session's streams: each waits for a write in progress (bounded by the
// stream's write deadline), then sends nothing more but "signedout".
func (o *openStreams) end(key []byte) {
	o.mu.Lock()
	var streams []*openStream
	for st := range o.bySession[string(key)] {
		streams = append(streams, st)
	}
	o.mu.Unlock()
	for _, st := range streams {
		st.mu.Lock()
		st.ended = true
		st.mu.Unlock()
		st.cancel()
	}
}
