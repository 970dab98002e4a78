package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// Cross-replica notifications of the PostgreSQL store (store.Notifier).
//
// A commit never sends NOTIFY itself: NOTIFY takes a database-wide lock from the notifying
// transaction's commit until its WAL record is flushed, so every commit that notified would
// wait for every other one. Instead, a commit that succeeded adds the objects it wrote to a
// pending set, and one goroutine per store (publish) sends the set every pgNotifyDelay, as a
// few pg_notify calls in a transaction of their own: the lock is then taken once per batch, by
// one connection, beside the commits.
//
// Changes listens on a connection of its own. When that connection dies it connects again
// and reports Lost (what was committed meanwhile was not heard); every pgPollEvery it reports
// Poll, the fallback for a notification that was never sent (a replica killed between its
// commit and its batch).

// pgChannel is the NOTIFY channel of the store's changes.
const pgChannel = "lifecyclesim_changes"

const (
	// pgNotifyDelay is how long a change waits for others to share its notification.
	pgNotifyDelay = 2 * time.Millisecond
	// pgNotifyMax bounds a notification's payload (PostgreSQL's limit is 8000 bytes).
	pgNotifyMax = 7000
	// pgPollEvery is how often Changes reports Poll (and checks its connection).
	pgPollEvery = time.Second
	// pgRelistenMax bounds the wait between attempts to connect the listener again.
	pgRelistenMax = time.Second
	// pgListenApp is the application_name of the listening connection (pg_stat_activity).
	pgListenApp = "lifecyclesim listen"
)

// pgNote is a notification's payload: who sent it (a store's random name, so a store skips
// its own), the objects changed as [tenant, ID] pairs, and what else changed (pgFlags).
type pgNote struct {
	From    string      `json:"f"`
	Objects [][2]string `json:"o,omitempty"`
	pgFlags
}

// pgFlags say what a notification's sender changed besides objects: the clock, the fault
// rules, the settings, or everything (a reset, or changes dropped: a set too large to send).
type pgFlags struct {
	Clock  bool `json:"c,omitempty"`
	Faults bool `json:"x,omitempty"`
	Config bool `json:"s,omitempty"`
	Lost   bool `json:"l,omitempty"`
}

// or is the flags of either.
func (f pgFlags) or(g pgFlags) pgFlags {
	return pgFlags{Clock: f.Clock || g.Clock, Faults: f.Faults || g.Faults, Config: f.Config || g.Config, Lost: f.Lost || g.Lost}
}

// pgNotifier is the pending set of a store's changes and its publishing goroutine.
type pgNotifier struct {
	from string

	mu      sync.Mutex
	objects map[store.ChangedObject]bool
	flags   pgFlags

	wake chan struct{} // a change is pending
	stop chan struct{} // closed by Close
	done chan struct{} // closed when publish has sent the last batch
}

func newPGNotifier() *pgNotifier {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &pgNotifier{from: hex.EncodeToString(b[:]), objects: map[store.ChangedObject]bool{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// add records changes to send.
func (n *pgNotifier) add(objects []store.ChangedObject, f pgFlags) {
	n.mu.Lock()
	for _, o := range objects {
		n.objects[o] = true
	}
	n.flags = n.flags.or(f)
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// take empties the pending set into notes no larger than pgNotifyMax.
func (n *pgNotifier) take() []pgNote {
	n.mu.Lock()
	objects, flags := n.objects, n.flags
	if len(objects) == 0 && flags == (pgFlags{}) {
		n.mu.Unlock()
		return nil
	}
	n.objects, n.flags = map[store.ChangedObject]bool{}, pgFlags{}
	n.mu.Unlock()
	cur := pgNote{From: n.from, pgFlags: flags}
	size := 64
	var out []pgNote
	for o := range objects {
		// JSON may escape a byte in up to 6: a pessimistic size keeps every note under the limit.
		sz := 6*(len(o.Tenant)+len(o.ID)) + 8
		if sz > pgNotifyMax-64 {
			cur.Lost = true // an ID too long to send: the listeners re-read everything
			continue
		}
		if size+sz > pgNotifyMax {
			out = append(out, cur)
			cur, size = pgNote{From: n.from}, 64
		}
		cur.Objects = append(cur.Objects, [2]string{o.Tenant, o.ID})
		size += sz
	}
	return append(out, cur)
}

// publish sends the pending changes until stop, then the last of them.
func (s *Store) publish() {
	n := s.notes
	defer close(n.done)
	for {
		select {
		case <-n.wake:
		case <-n.stop:
			s.sendNotes(n.take())
			return
		}
		select { // let more commits join the batch
		case <-time.After(pgNotifyDelay):
		case <-n.stop:
		}
		s.sendNotes(n.take())
	}
}

// sendNotes sends notes in one transaction. A failure is not retried: the listeners' Poll
// bounds the delay of what it dropped.
func (s *Store) sendNotes(notes []pgNote) {
	if len(notes) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b := &pgx.Batch{}
	for _, note := range notes {
		payload, err := json.Marshal(note)
		if err != nil {
			continue
		}
		b.Queue("SELECT pg_notify($1, $2)", pgChannel, string(payload))
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		s.notifyErrors.Add(1)
	}
}

// committed records a successful commit's objects for the listeners of other stores.
func (s *Store) committed(b store.Batch) {
	objects := make([]store.ChangedObject, len(b.Writes))
	for i, w := range b.Writes {
		objects[i] = store.ChangedObject{Tenant: w.Object.Tenant, ID: w.Object.ID}
	}
	s.notes.add(objects, pgFlags{})
}

var _ store.Notifier = (*Store)(nil)

// Changes implements store.Notifier: it listens on a connection of its own until ctx ends.
func (s *Store) Changes(ctx context.Context) (<-chan store.Changes, error) {
	conn, err := s.listen(ctx)
	if err != nil {
		return nil, pgErr("listen", err)
	}
	ch := make(chan store.Changes, 64)
	go s.follow(ctx, conn, ch)
	return ch, nil
}

// listen opens a connection that listens on pgChannel.
func (s *Store) listen(ctx context.Context) (*pgx.Conn, error) {
	cfg := s.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = pgListenApp
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgChannel); err != nil {
		_ = conn.Close(context.Background())
		return nil, err
	}
	return conn, nil
}

// follow delivers what conn hears to ch until ctx ends, connecting again when conn dies.
func (s *Store) follow(ctx context.Context, conn *pgx.Conn, ch chan<- store.Changes) {
	defer close(ch)
	defer func() {
		if conn != nil {
			_ = conn.Close(context.Background())
		}
	}()
	send := func(c store.Changes) bool {
		select {
		case ch <- c:
			return true
		case <-ctx.Done():
			return false
		}
	}
	nextPoll := time.Now().Add(pgPollEvery)
	var backoff time.Duration
	for ctx.Err() == nil {
		if conn == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			var err error
			if conn, err = s.listen(ctx); err != nil {
				backoff = min(max(2*backoff, 50*time.Millisecond), pgRelistenMax)
				continue
			}
			backoff = 0
			s.cache.clear() // what other replicas committed meanwhile was not heard
			s.owned.sweepSoon()
			if !send(store.Changes{Lost: true}) {
				return
			}
		}
		if time.Now().After(nextPoll) {
			// Poll first: the waiters re-read even while a connection that died without a word
			// (a network partition) takes the ping's timeout to be found out.
			nextPoll = time.Now().Add(pgPollEvery)
			if !send(store.Changes{Poll: true}) {
				return
			}
			pingCtx, cancel := context.WithTimeout(ctx, pgPollEvery)
			err := conn.Ping(pingCtx)
			cancel()
			if err != nil {
				_ = conn.Close(context.Background())
				conn = nil
				continue
			}
		}
		waitCtx, cancel := context.WithDeadline(ctx, nextPoll)
		n, err := conn.WaitForNotification(waitCtx)
		cancel()
		switch {
		case err == nil:
			if c, ok := s.decodeNote(n.Payload); ok && !send(c) {
				return
			}
		case ctx.Err() != nil:
			return
		case conn.IsClosed() || !errors.Is(err, context.DeadlineExceeded):
			_ = conn.Close(context.Background())
			conn = nil
		}
	}
}

// decodeNote turns a notification into store.Changes; ok is false for the store's own.
func (s *Store) decodeNote(payload string) (store.Changes, bool) {
	var note pgNote
	if err := json.Unmarshal([]byte(payload), &note); err != nil {
		s.cache.clear()
		s.owned.sweepSoon()
		return store.Changes{Lost: true}, true // not ours to read: re-read everything
	}
	if note.From == s.notes.from {
		return store.Changes{}, false
	}
	if note.Lost {
		s.cache.clear()
		s.owned.sweepSoon()
	}
	ids := make([]string, len(note.Objects))
	for i, o := range note.Objects {
		ids[i] = o[1]
	}
	s.cache.drop(ids...)
	// Another replica's write of an object this one lands made it the writer's (or nobody's).
	s.owned.doubt(true, ids...)
	c := store.Changes{Clock: note.Clock, Faults: note.Faults, Config: note.Config, Lost: note.Lost,
		Objects: make([]store.ChangedObject, len(note.Objects))}
	for i, o := range note.Objects {
		c.Objects[i] = store.ChangedObject{Tenant: o[0], ID: o[1]}
	}
	return c, true
}
