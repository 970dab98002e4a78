package simulator

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"
)

// MemStore is an in-memory Store for tests and throwaway runs.
type MemStore struct {
	mu      sync.Mutex
	objects map[string]*Object
	events  map[string][]Event
	idem    map[[2]string][2]string // (tenant, key) → (object ID, body hash)
	offset  time.Duration
}

var _ Store = (*MemStore)(nil)

// NewMemStore returns an empty in-memory store.
func NewMemStore() *MemStore {
	s := &MemStore{}
	s.reset()
	return s
}

func (s *MemStore) reset() {
	s.objects = map[string]*Object{}
	s.events = map[string][]Event{}
	s.idem = map[[2]string][2]string{}
}

// clone deep-copies an object so callers never share maps with the store.
func clone(o *Object) *Object {
	b, err := json.Marshal(o)
	if err != nil {
		panic(err) // objects hold only JSON values
	}
	var c Object
	if err := json.Unmarshal(b, &c); err != nil {
		panic(err)
	}
	return &c
}

func (s *MemStore) appendEvents(id string, events []Event) {
	seq := int64(len(s.events[id]))
	for _, e := range events {
		seq++
		e.Seq = seq
		s.events[id] = append(s.events[id], e)
	}
}

// Commit implements Store.
func (s *MemStore) Commit(_ context.Context, b Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Check every compare-and-set first: all or nothing.
	inserted := map[string]bool{}
	for _, w := range b.Writes {
		cur, ok := s.objects[w.Object.ID]
		switch {
		case w.Expect == 0 && !w.Remove:
			if ok || inserted[w.Object.ID] {
				return ErrExists
			}
			inserted[w.Object.ID] = true
		case !ok || cur.Tenant != w.Object.Tenant:
			return ErrNotFound
		case cur.Version != w.Expect:
			return ErrVersion
		}
	}
	for _, w := range b.Writes {
		if w.Remove {
			delete(s.objects, w.Object.ID)
		} else {
			s.objects[w.Object.ID] = clone(w.Object)
		}
		s.appendEvents(w.Object.ID, w.Events)
	}
	if b.Key != "" && len(b.Writes) > 0 {
		s.idem[[2]string{b.Writes[0].Object.Tenant, b.Key}] = [2]string{b.Writes[0].Object.ID, b.KeyHash}
	}
	return nil
}

// Get implements Store.
func (s *MemStore) Get(_ context.Context, tenant, id string) (*Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objects[id]
	if !ok || o.Tenant != tenant {
		return nil, ErrNotFound
	}
	return clone(o), nil
}

// List implements Store.
func (s *MemStore) List(_ context.Context, tenant string, f Filter) ([]*Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Object
	for _, o := range s.objects {
		if o.Tenant == tenant && f.Matches(o) {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	for i, o := range out {
		out[i] = clone(o)
	}
	return out, nil
}

// Matches reports whether an object passes the filter (tenant aside).
func (f Filter) Matches(o *Object) bool {
	if f.Kind != "" && o.Kind != f.Kind {
		return false
	}
	if f.ParentID != "" && o.ParentID != f.ParentID {
		return false
	}
	if f.State != "" && o.State != f.State {
		return false
	}
	if f.Link[0] != "" {
		if v, _ := o.Spec[f.Link[0]].(string); v != f.Link[1] {
			return false
		}
	}
	return f.After == "" || o.ID > f.After
}

// Events implements Store.
func (s *MemStore) Events(_ context.Context, tenant, id string) ([]Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	evs := s.events[id]
	if len(evs) == 0 || evs[0].Tenant != tenant {
		return nil, ErrNotFound
	}
	return append([]Event(nil), evs...), nil
}

// Due implements Store.
func (s *MemStore) Due(_ context.Context, now time.Time) ([]*Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Object
	for _, o := range s.objects {
		if !o.Due.IsZero() && !o.Due.After(now) {
			out = append(out, clone(o))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Due.Equal(out[j].Due) {
			return out[i].Due.Before(out[j].Due)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// NextDue implements Store.
func (s *MemStore) NextDue(context.Context) (time.Time, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var next time.Time
	for _, o := range s.objects {
		if !o.Due.IsZero() && (next.IsZero() || o.Due.Before(next)) {
			next = o.Due
		}
	}
	return next, !next.IsZero(), nil
}

// Idempotent implements Store.
func (s *MemStore) Idempotent(_ context.Context, tenant, key string) (string, string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.idem[[2]string{tenant, key}]
	return r[0], r[1], ok, nil
}

// CountObjects implements Store.
func (s *MemStore) CountObjects(_ context.Context, tenant string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, o := range s.objects {
		if o.Tenant == tenant {
			n++
		}
	}
	return n, nil
}

// ClockOffset implements Store.
func (s *MemStore) ClockOffset(context.Context) (time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.offset, nil
}

// SetClockOffset implements Store.
func (s *MemStore) SetClockOffset(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.offset = d
	return nil
}

// Counts implements Store.
func (s *MemStore) Counts(context.Context) (map[[2]string]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[[2]string]int{}
	for _, o := range s.objects {
		out[[2]string{o.Kind, o.State}]++
	}
	return out, nil
}

// Reset implements Store.
func (s *MemStore) Reset(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	offset := s.offset // the clock is not an object: a reset keeps it
	s.reset()
	s.offset = offset
	return nil
}

// Close implements Store.
func (s *MemStore) Close() error { return nil }

// Ping implements Store. An in-memory store is ready whenever its lock can be taken.
func (s *MemStore) Ping(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memory store: %w", err)
	}
	return nil
}
