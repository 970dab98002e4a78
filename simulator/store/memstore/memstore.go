package memstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/codec"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/table"
)

// Store is an in-memory store.Store for tests and throwaway runs: the object table (package table),
// each object's events encoded, and the idempotency keys, under the table's lock. An object's
// events are kept in its table entry (Entry.History): a map of 100k histories beside the
// table would be 100k more slots for the garbage collector to scan on every cycle.
type Store struct {
	t            *table.Table // objects with their events (Entry.History)
	table.Reader              // the Store's reads, served from t
	// gone holds the histories of removed objects by ID; an ID made again in the same tenant
	// continues its history.
	gone map[string]eventLog
	// words are the strings events take from the state machines (actors, states, actions),
	// each kept once; an event holds their indexes.
	words     []string
	wordIndex map[string]uint64
	idem      map[[2]string]idemRecord // (tenant, key) → what the key was recorded for
	idemOrder idemQueue                // the keys in the order they were recorded
	offset    time.Duration
}

// eventLog is a removed object's history (see appendLog) and its tenant.
type eventLog struct {
	tenant string
	buf    []byte
}

// appendLog appends encoded events to a history: events one after another (see appendEvent),
// without the object ID and tenant. One buffer per object keeps 100k objects' histories
// small: a short one grows to its exact size (most objects have a few events), a long one as
// slices do, so appending stays amortised O(1).
func appendLog(buf []byte, events [][]byte) []byte {
	size := len(buf)
	for _, e := range events {
		size += len(e)
	}
	if size > cap(buf) && size <= 4096 {
		grown := make([]byte, len(buf), size)
		copy(grown, buf)
		buf = grown
	}
	for _, e := range events {
		buf = append(buf, e...)
	}
	return buf
}

// word returns the index of a state-machine string, adding it (under the write lock).
func (s *Store) word(w string) uint64 {
	i, ok := s.wordIndex[w]
	if !ok {
		i = uint64(len(s.words))
		s.words = append(s.words, w)
		s.wordIndex[w] = i
	}
	return i
}

// appendEvent encodes an event for a log: its time (binary, with its zone), actor, from, to
// and action as word indexes, then operation ID, error and message, length-prefixed. Its seq
// is its place in the log.
func (s *Store) appendEvent(b []byte, e store.Event) ([]byte, error) {
	t, err := e.Time.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("encode event time: %w", err)
	}
	b = codec.AppendBytes(b, t)
	for _, w := range []string{e.Actor, e.From, e.To, e.Action} {
		b = binary.AppendUvarint(b, s.word(w))
	}
	for _, f := range []string{e.OperationID, e.Error, e.Message} {
		b = codec.AppendBytes(b, []byte(f))
	}
	return b, nil
}

// decodeEvents decodes a log's events; words is the word list as it was when the log was read.
func decodeEvents(buf []byte, words []string, id, tenant string) ([]store.Event, error) {
	d := &codec.Decoder{B: buf}
	var out []store.Event
	word := func() string {
		if i := d.Uvarint(); i < uint64(len(words)) {
			return words[i]
		}
		d.Fail()
		return ""
	}
	for len(d.B) > 0 && d.Err == nil {
		e := store.Event{ObjectID: id, Tenant: tenant, Seq: int64(len(out)) + 1}
		if err := e.Time.UnmarshalBinary(d.Bytes()); err != nil {
			d.Fail()
		}
		e.Actor, e.From, e.To, e.Action = word(), word(), word(), word()
		e.OperationID, e.Error, e.Message = string(d.Bytes()), string(d.Bytes()), string(d.Bytes())
		out = append(out, e)
	}
	if d.Err != nil {
		return nil, fmt.Errorf("memory store: decode events of %s: %w", id, d.Err)
	}
	return out, nil
}

var (
	_ store.Store      = (*Store)(nil)
	_ store.DueRounder = (*Store)(nil)
	_ store.SkipLister = (*Store)(nil)
)

// New returns an empty in-memory store.
func New() *Store {
	t := table.New()
	s := &Store{t: t, Reader: t}
	s.reset()
	return s
}

func (s *Store) reset() {
	s.t.Clear()
	s.gone = map[string]eventLog{}
	s.idem = map[[2]string]idemRecord{}
	s.idemOrder = idemQueue{}
	s.words, s.wordIndex = nil, map[string]uint64{}
}

// Commit implements store.Store.
func (s *Store) Commit(_ context.Context, b store.Batch) error {
	packs, err := codec.PackWrites(b)
	if err != nil {
		return fmt.Errorf("memory store: %w", err)
	}
	s.t.Lock()
	defer s.t.Unlock()
	if err := s.checkKey(b); err != nil {
		return err
	}
	if err := s.t.Check(b); err != nil {
		return err
	}
	// Encode every event before changing anything: all or nothing.
	evs := make([][][]byte, len(b.Writes))
	for i, w := range b.Writes {
		for _, e := range w.Events {
			enc, err := s.appendEvent(nil, e)
			if err != nil {
				return fmt.Errorf("memory store: %w", err)
			}
			evs[i] = append(evs[i], enc)
		}
	}
	for i, w := range b.Writes {
		id := w.Object.ID
		if w.Remove {
			// The history outlives the object (check saw the entry).
			e, _ := s.t.Lookup(id)
			if buf := appendLog(e.History(), evs[i]); len(buf) > 0 {
				s.gone[id] = eventLog{tenant: e.Tenant, buf: buf}
			}
			s.t.Remove(id)
			continue
		}
		e := s.t.Set(s.t.NewEntry(w.Object, packs[i]))
		if l, ok := s.gone[id]; ok && e.History() == nil && l.tenant == e.Tenant {
			e.SetHistory(l.buf)
			delete(s.gone, id)
		}
		e.SetHistory(appendLog(e.History(), evs[i]))
	}
	if b.Key != "" && len(b.Writes) > 0 {
		k, at := [2]string{b.Writes[0].Object.Tenant, b.Key}, b.KeyAt.UnixNano()
		s.idem[k] = idemRecord{id: b.Writes[0].Object.ID, hash: b.KeyHash, at: at}
		s.idemOrder.push(k, at)
		s.idemOrder.expire(at-int64(store.KeyRetention), func(k [2]string, at int64) {
			if s.idem[k].at == at { // not recorded again since
				delete(s.idem, k)
			}
		})
	}
	return nil
}

// checkKey refuses (under the write lock) a batch whose key its tenant holds already.
func (s *Store) checkKey(b store.Batch) error {
	if b.Key == "" || len(b.Writes) == 0 || b.KeyAt.IsZero() {
		return nil // nothing recorded, or an invalid batch Check refuses
	}
	tenant := b.Writes[0].Object.Tenant
	r, ok := s.idem[[2]string{tenant, b.Key}]
	if ok && !store.KeyFree(time.Unix(0, r.at), b.KeyAt) {
		return &store.KeyTakenError{Tenant: tenant, Key: b.Key, ID: r.id, BodyHash: r.hash}
	}
	return nil
}

// idemRecord is an idempotency key's object, body hash and time (Unix ns).
type idemRecord struct {
	id, hash string
	at       int64
}

// idemQueue holds keys in the order they were recorded, so the expired ones are found at
// its front without a walk over all of them.
type idemQueue struct {
	keys []timedKey
	head int
}

// timedKey is a (tenant, key) and when it was recorded (Unix ns).
type timedKey struct {
	k  [2]string
	at int64
}

func (q *idemQueue) push(k [2]string, at int64) { q.keys = append(q.keys, timedKey{k, at}) }

// expire takes from the front every key recorded before cutoff, calling forget for each. A
// clock set back can put a newer key first; the keys behind it then wait for it.
func (q *idemQueue) expire(cutoff int64, forget func(k [2]string, at int64)) {
	for q.head < len(q.keys) && q.keys[q.head].at < cutoff {
		forget(q.keys[q.head].k, q.keys[q.head].at)
		q.keys[q.head] = timedKey{}
		q.head++
	}
	if q.head > 1024 && q.head > len(q.keys)/2 {
		q.keys = append([]timedKey(nil), q.keys[q.head:]...)
		q.head = 0
	}
}

// Events implements store.Store.
func (s *Store) Events(_ context.Context, tenant, id string) ([]store.Event, error) {
	s.t.RLock()
	var buf []byte
	if e, ok := s.t.Lookup(id); ok && e.Tenant == tenant {
		buf = e.History()
	} else if l, ok := s.gone[id]; ok && l.tenant == tenant {
		buf = l.buf
	}
	buf = buf[:len(buf):len(buf)] // appends never change what is there
	words := s.words[:len(s.words):len(s.words)]
	s.t.RUnlock()
	if len(buf) == 0 {
		return nil, store.ErrNotFound
	}
	return decodeEvents(buf, words, id, tenant)
}

// Idempotent implements store.Store.
func (s *Store) Idempotent(_ context.Context, tenant, key string) (string, string, bool, error) {
	s.t.RLock()
	defer s.t.RUnlock()
	r, ok := s.idem[[2]string{tenant, key}]
	return r.id, r.hash, ok, nil
}

// ClockOffset implements store.Store.
func (s *Store) ClockOffset(context.Context) (time.Duration, error) {
	s.t.RLock()
	defer s.t.RUnlock()
	return s.offset, nil
}

// SetClockOffset implements store.Store.
func (s *Store) SetClockOffset(_ context.Context, d time.Duration) error {
	s.t.Lock()
	defer s.t.Unlock()
	s.offset = d
	return nil
}

// Reset implements store.Store. The clock is not an object: a reset keeps it.
func (s *Store) Reset(context.Context) error {
	s.t.Lock()
	defer s.t.Unlock()
	s.reset()
	return nil
}

// Close implements store.Store.
func (s *Store) Close() error { return nil }

// Ping implements store.Store. An in-memory store is ready whenever its lock can be taken.
func (s *Store) Ping(ctx context.Context) error {
	s.t.RLock()
	defer s.t.RUnlock()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memory store: %w", err)
	}
	return nil
}

// Removed implements store.Store.
func (s *Store) Removed(_ context.Context, tenant string) ([]string, error) {
	s.t.RLock()
	defer s.t.RUnlock()
	var ids []string
	for id, l := range s.gone {
		if l.tenant == tenant {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// Import implements store.Store, under the table's write lock.
func (s *Store) Import(_ context.Context, im store.Import) error {
	ids, err := store.CheckImport(im)
	if err != nil {
		return err
	}
	b := importBatch(im)
	packs, err := codec.PackWrites(b)
	if err != nil {
		return fmt.Errorf("memory store: import: %w", err)
	}
	s.t.Lock()
	defer s.t.Unlock()
	if err := s.importable(b, ids); err != nil {
		return err
	}
	logs := map[string][]byte{}
	for _, e := range im.Events {
		enc, err := s.appendEvent(logs[e.ObjectID], e)
		if err != nil {
			return fmt.Errorf("memory store: import: %w", err)
		}
		logs[e.ObjectID] = enc
	}
	for i, w := range b.Writes {
		e := s.t.Set(s.t.NewEntry(w.Object, packs[i]))
		e.SetHistory(logs[w.Object.ID])
		delete(logs, w.Object.ID)
	}
	for id, buf := range logs {
		s.gone[id] = eventLog{tenant: im.Tenant, buf: buf}
	}
	return nil
}

// importable checks (under the write lock) that an import's IDs are new and its objects fit
// the quota.
func (s *Store) importable(b store.Batch, histories []string) error {
	for _, id := range histories {
		if _, ok := s.gone[id]; ok {
			return &store.IDTakenError{What: "object", ID: id}
		}
	}
	for _, w := range b.Writes {
		if _, ok := s.t.Lookup(w.Object.ID); ok {
			return &store.IDTakenError{What: "object", ID: w.Object.ID}
		}
	}
	for _, id := range histories {
		if _, ok := s.t.Lookup(id); ok {
			return &store.IDTakenError{What: "object", ID: id}
		}
	}
	return s.t.Check(b)
}

// importBatch is an import's objects as a batch of inserts (for the table's checks).
func importBatch(im store.Import) store.Batch {
	b := store.Batch{MaxObjects: im.MaxObjects, Writes: make([]store.Write, len(im.Objects))}
	for i, o := range im.Objects {
		b.Writes[i] = store.Write{Object: o}
	}
	return b
}
