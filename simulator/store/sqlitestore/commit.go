package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/internal/codec"
)

// clearPending forgets what only the journal held (after a checkpoint of everything, a reset
// or a reload).
func (s *Store) clearPending() {
	s.keys = map[[2]string]pendingKey{}
	s.events = map[string][]byte{}
}

// appendPendingEvent appends an event to an object's pending events (Store.events): the
// number of its record, its own number, its tenant and its data. An object's pending events
// are one buffer without pointers, not a slice of structs holding strings and slices: the
// garbage collector marks one object per object, not three or four per event.
func appendPendingEvent(b []byte, rec uint64, seq int64, tenant string, data []byte) []byte {
	b = binary.AppendUvarint(b, rec)
	b = binary.AppendVarint(b, seq)
	b = codec.AppendBytes(b, []byte(tenant))
	return codec.AppendBytes(b, data)
}

// pendingEvents calls fn with each event of an object's pending events, in order, and the
// offset of the next one; fn returns false to stop.
func pendingEvents(b []byte, fn func(rec uint64, seq int64, tenant, data []byte, next int) bool) {
	d := &codec.Decoder{B: b}
	for len(d.B) > 0 {
		rec, seq, tenant, data := d.Uvarint(), d.Varint(), d.Bytes(), d.Bytes()
		if d.Err != nil || !fn(rec, seq, tenant, data, len(b)-len(d.B)) {
			return
		}
	}
}

// Commit implements store.Store.
func (s *Store) Commit(ctx context.Context, b store.Batch) error {
	packs, err := codec.PackWrites(b)
	if err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	evs, err := encodeEvents(b)
	if err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	r := &record{writes: make([]recordWrite, len(b.Writes))}
	if !b.Background {
		r.done = make(chan error, 1)
	}
	s.t.Lock()
	err = s.applyLocked(ctx, b, packs, evs, r)
	s.t.Unlock()
	if err != nil || r.done == nil {
		return err
	}
	// Not bounded by ctx: the change is applied and every reader sees it; whether the client
	// is still there does not change whether it must reach the file.
	return <-r.done
}

// applyLocked checks a batch's compare-and-sets, applies it to the table with its events
// numbered on from each object's last (the table's, or for an ID used again the one its
// removal left), fills in its record and queues it: under the table's lock, so the journal
// gets the changes in the order they applied. packs are the objects' packed form
// (codec.PackObject), which the table, the journal and the file all hold: a write encodes its
// object once.
func (s *Store) applyLocked(ctx context.Context, b store.Batch, packs [][]byte, evs [][][]byte, r *record) error {
	if s.broken != nil {
		return s.broken
	}
	if err := s.checkKey(ctx, b); err != nil {
		return err
	}
	if err := s.t.Check(b); err != nil {
		return err
	}
	r.seq = s.j.next()
	for i, w := range b.Writes {
		o := w.Object
		last := s.gone[o.ID]
		if e, ok := s.t.Lookup(o.ID); ok {
			last = e.Events
		}
		e := s.t.NewEntry(o, packs[i])
		e.Events = last + int64(len(evs[i]))
		rw := recordWrite{id: o.ID, Row: e.Row, remove: w.Remove}
		if len(evs[i]) > 0 {
			rw.added = make([]recordEvent, len(evs[i]))
			pending := s.events[o.ID]
			for j, data := range evs[i] {
				rw.added[j] = recordEvent{seq: last + int64(j) + 1, data: data}
				pending = appendPendingEvent(pending, r.seq, last+int64(j)+1, o.Tenant, data)
			}
			s.events[o.ID] = pending
		}
		r.writes[i] = rw
		if w.Remove {
			s.t.Remove(o.ID)
			s.gone[o.ID] = e.Events
			continue
		}
		delete(s.gone, o.ID)
		s.t.Set(e)
	}
	if b.Key != "" && len(b.Writes) > 0 {
		o := b.Writes[0].Object
		r.key = &recordKey{tenant: o.Tenant, key: b.Key, id: o.ID, hash: b.KeyHash, at: b.KeyAt.UnixNano()}
		s.keys[[2]string{o.Tenant, b.Key}] = pendingKey{id: o.ID, hash: b.KeyHash, rec: r.seq, at: b.KeyAt.UnixNano()}
	}
	s.j.push(r)
	return nil
}

// checkKey refuses (under the table's write lock) a batch whose key its tenant holds already:
// in the journal, or else in the file (a key leaves the journal only once a checkpoint
// committed it to the file, and only a commit under this lock adds one, so the two reads
// cannot both miss it).
func (s *Store) checkKey(ctx context.Context, b store.Batch) error {
	if b.Key == "" || len(b.Writes) == 0 || b.KeyAt.IsZero() {
		return nil // nothing recorded, or an invalid batch Check refuses
	}
	tenant := b.Writes[0].Object.Tenant
	id, hash, at := "", "", int64(0)
	if p, ok := s.keys[[2]string{tenant, b.Key}]; ok {
		id, hash, at = p.id, p.hash, p.at
	} else {
		err := s.rdb.QueryRowContext(context.WithoutCancel(ctx), "SELECT object_id, body_hash, created_at FROM idempotency WHERE tenant = ? AND key = ?",
			tenant, b.Key).Scan(&id, &hash, &at)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return sqliteErr("commit", "idempotency key", err)
		}
	}
	if store.KeyFree(time.Unix(0, at), b.KeyAt) {
		return nil
	}
	return &store.KeyTakenError{Tenant: tenant, Key: b.Key, ID: id, BodyHash: hash}
}

// Removed implements store.Store: the removed objects (Store.gone) whose events the file or
// the journal holds for the tenant.
func (s *Store) Removed(ctx context.Context, tenant string) ([]string, error) {
	s.t.RLock()
	gone := make(map[string]bool, len(s.gone))
	for id := range s.gone {
		gone[id] = true
	}
	found := map[string]bool{}
	for id, pending := range s.events {
		if !gone[id] {
			continue
		}
		pendingEvents(pending, func(_ uint64, _ int64, t, _ []byte, _ int) bool {
			if string(t) == tenant {
				found[id] = true
				return false
			}
			return true
		})
	}
	s.t.RUnlock()
	rows, err := s.rdb.QueryContext(ctx, "SELECT DISTINCT object_id FROM events WHERE tenant = ?", tenant)
	if err != nil {
		return nil, sqliteErr("removed objects", "", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, sqliteErr("removed objects", "", err)
		}
		if gone[id] {
			found[id] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, sqliteErr("removed objects", "", err)
	}
	return slices.Sorted(maps.Keys(found)), nil
}

// Import implements store.Store: one journal record, as a commit's, of the objects as inserts
// and the removed objects' histories as removals.
func (s *Store) Import(ctx context.Context, im store.Import) error {
	ids, err := store.CheckImport(im)
	if err != nil {
		return err
	}
	b := store.Batch{MaxObjects: im.MaxObjects, Writes: make([]store.Write, len(im.Objects))}
	live := make(map[string]bool, len(im.Objects))
	for i, o := range im.Objects {
		b.Writes[i] = store.Write{Object: o}
		live[o.ID] = true
	}
	packs, err := codec.PackWrites(b)
	if err != nil {
		return fmt.Errorf("sqlite: import: %w", err)
	}
	// The histories as writes (a removed object's as its removal), for encodeEvents.
	hist := store.Batch{}
	for i, e := range im.Events {
		if i == 0 || im.Events[i-1].ObjectID != e.ObjectID {
			hist.Writes = append(hist.Writes, store.Write{Object: &store.Object{ID: e.ObjectID, Tenant: im.Tenant}, Remove: !live[e.ObjectID]})
		}
		w := &hist.Writes[len(hist.Writes)-1]
		w.Events = append(w.Events, e)
	}
	evs, err := encodeEvents(hist)
	if err != nil {
		return fmt.Errorf("sqlite: import: %w", err)
	}
	r := &record{done: make(chan error, 1)}
	s.t.Lock()
	err = s.importLocked(b, packs, hist, evs, ids, r)
	s.t.Unlock()
	if err != nil {
		return err
	}
	return <-r.done
}

// importLocked checks that an import's IDs are new and applies it, under the table's lock
// (packs as applyLocked's).
func (s *Store) importLocked(b store.Batch, packs [][]byte, hist store.Batch, evs [][][]byte, ids []string, r *record) error {
	if s.broken != nil {
		return s.broken
	}
	for _, id := range ids {
		if _, ok := s.gone[id]; ok {
			return &store.IDTakenError{What: "object", ID: id}
		}
		if _, ok := s.t.Lookup(id); ok {
			return &store.IDTakenError{What: "object", ID: id}
		}
	}
	for _, w := range b.Writes {
		if _, ok := s.t.Lookup(w.Object.ID); ok {
			return &store.IDTakenError{What: "object", ID: w.Object.ID}
		}
	}
	if err := s.t.Check(b); err != nil {
		return err
	}
	r.seq = s.j.next()
	added := map[string][]recordEvent{}
	for i, w := range hist.Writes {
		id := w.Object.ID
		pending := s.events[id]
		for j, data := range evs[i] {
			added[id] = append(added[id], recordEvent{seq: int64(j) + 1, data: data})
			pending = appendPendingEvent(pending, r.seq, int64(j)+1, w.Object.Tenant, data)
		}
		s.events[id] = pending
		if w.Remove {
			row := s.t.NewEntry(w.Object, nil).Row
			row.Events = int64(len(evs[i]))
			r.writes = append(r.writes, recordWrite{id: id, Row: row, remove: true, added: added[id]})
			s.gone[id] = row.Events
		}
	}
	for i, w := range b.Writes {
		e := s.t.NewEntry(w.Object, packs[i])
		e.Events = int64(len(added[w.Object.ID]))
		r.writes = append(r.writes, recordWrite{id: w.Object.ID, Row: e.Row, added: added[w.Object.ID]})
		s.t.Set(e)
	}
	s.j.push(r)
	return nil
}
