package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// Group commit of the requests' transactions: the commits of requests that arrive while every
// connection is busy wait together, and the first of them to get a connection sends them all
// in one round trip (as the SQLite journal gathers the requests that wait for one fsync).
//
// The group is one pipeline of transactions, each its own implicit transaction ended by its
// own Sync, so one that fails a check rolls back alone and the others commit. PostgreSQL runs
// them one after the other on the connection; each but the last would wait for its own WAL
// flush, so every transaction of a group of several runs with synchronous_commit off and a
// last one (pgFlushSQL: it writes a WAL record, so its commit is a synchronous one) flushes the
// WAL through all of them. No commit of a group is reported before that flush: a
// request is answered only once what it changed is durable. Other connections may read a
// group's changes during the flush (a fraction of a millisecond), as they read the worker's
// landings, which never wait for it.
//
// A group also waits for more commits when requests commit concurrently (gather): a group
// costs both sides a round trip, a statement's start and a WAL flush whatever it carries, and
// on a core the replica shares with PostgreSQL, commits arrive one at a time, so groups stay
// of one or two unless the first waits. The commit that got a connection waits, up to
// pgGatherWait, until as many commits are pending as were in flight at once lately (the
// recent peak): a lone client (a peak of one) never waits, and 16 clients' commits go in
// groups of several. Others that arrive meanwhile join its group instead of taking
// connections of their own.

// pgGroupMax bounds the transactions of one group.
const pgGroupMax = 64

const (
	// pgGatherWait bounds how long a group waits for more commits (gather).
	pgGatherWait = 2 * time.Millisecond
	// pgPeakWindow is how long a peak of commits in flight at once counts (gather).
	pgPeakWindow = 100 * time.Millisecond
)

const (
	// pgAsyncSQL opens each transaction of a group of several: its commit does not wait for
	// the flush (SET LOCAL, for this transaction).
	pgAsyncSQL = "SELECT set_config('synchronous_commit', 'off', true)"
	// pgFlushSQL is the last transaction of a group of several. Its commit waits for the WAL
	// to be flushed through it only if the transaction wrote a WAL record before its commit
	// record: taking a transaction ID alone (pg_current_xact_id) does not, and such a commit is
	// asynchronous whatever synchronous_commit says, so a crash of the server (kill -9 of the
	// postmaster) lost acknowledged commits of the group. A transactional logical message (an
	// empty one, under the prefix lifecyclesim; any user may emit one, at any wal_level) is a
	// WAL record of the transaction.
	pgFlushSQL = "SELECT pg_logical_emit_message(true, 'lifecyclesim', '')"
)

// pgGroup is the requests' commits waiting for a connection.
type pgGroup struct {
	mu      sync.Mutex
	pending []*pgGroupCommit
	// inflight counts the commits between their arrival and their outcome; peak is the most
	// of them at once in the window begun at peakSince, lastPeak that of the window before.
	inflight, peak, lastPeak int
	peakSince                time.Time
	// gathering is closed when the group a commit is gathering (gather) is taken; grew, while
	// it gathers, when another commit arrives. gatherWait, when not zero, replaces
	// pgGatherWait (tests).
	gathering, grew chan struct{}
	gatherWait      time.Duration
}

// arrive adds c to the pending commits.
func (g *pgGroup) arrive(c *pgGroupCommit) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pending = append(g.pending, c)
	g.inflight++
	if now := time.Now(); now.Sub(g.peakSince) > pgPeakWindow {
		g.lastPeak, g.peak = g.peak, 0
		if now.Sub(g.peakSince) > 2*pgPeakWindow {
			g.lastPeak = 0 // the window before this one saw no commit
		}
		g.peakSince = now
	}
	g.peak = max(g.peak, g.inflight)
	if g.grew != nil {
		close(g.grew)
		g.grew = nil
	}
}

// leave records that a commit has its outcome.
func (g *pgGroup) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inflight--
}

// underway is the end of the gathering in progress, or nil when none is.
func (g *pgGroup) underway() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gathering
}

// waiting says whether c still waits for a group.
func (g *pgGroup) waiting(c *pgGroupCommit) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Contains(g.pending, c)
}

// gatherAndTake takes a group: at once, or, when commits have lately been in flight several
// at once and no other commit gathers, once as many are pending as the recent peak or
// pgGatherWait has passed.
func (g *pgGroup) gatherAndTake() []*pgGroupCommit {
	g.mu.Lock()
	defer g.mu.Unlock()
	want := g.wantLocked()
	if g.gathering != nil || want < 2 || len(g.pending) >= want {
		return g.takeLocked()
	}
	g.gathering = make(chan struct{})
	g.waitFor(want)
	batch := g.takeLocked()
	close(g.gathering)
	g.gathering, g.grew = nil, nil
	return batch
}

// wantLocked is how many commits a group gathers for, with g.mu held: the recent peak.
func (g *pgGroup) wantLocked() int { return min(max(g.peak, g.lastPeak), pgGroupMax) }

// waitFor waits, with g.mu held (and let go while it waits), until want commits are pending
// or pgGatherWait has passed.
func (g *pgGroup) waitFor(want int) {
	timer := time.NewTimer(cmp.Or(g.gatherWait, pgGatherWait))
	defer timer.Stop()
	for len(g.pending) < want {
		grew := make(chan struct{})
		g.grew = grew
		g.mu.Unlock()
		select {
		case <-grew:
			g.mu.Lock()
		case <-timer.C:
			g.mu.Lock()
			return
		}
	}
}

// pgGroupCommit is a request's commit and where its outcome goes.
type pgGroupCommit struct {
	batch store.Batch
	plan  *pgPlan
	merge bool        // it can go in the group's merged write (mergeable)
	q     *pgPipeline // its own transaction's statements, once a group needs them
	done  chan error  // buffered: the sender never waits
}

// pipeline is the statements of c's own transaction.
func (c *pgGroupCommit) pipeline() *pgPipeline {
	if c.q == nil {
		c.q = buildCommit(c.batch, c.plan)
	}
	return c.q
}

// takeLocked removes up to pgGroupMax waiting commits, the oldest first, with g.mu held.
func (g *pgGroup) takeLocked() []*pgGroupCommit {
	n := min(len(g.pending), pgGroupMax)
	out := g.pending[:n:n]
	g.pending = g.pending[n:]
	if len(g.pending) == 0 {
		g.pending = nil
	}
	return out
}

// withdraw removes c if no group has taken it yet, and says whether it did.
func (g *pgGroup) withdraw(c *pgGroupCommit) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, p := range g.pending {
		if p == c {
			g.pending = append(g.pending[:i:i], g.pending[i+1:]...)
			return true
		}
	}
	return false
}

// commitGrouped commits c with the other requests' commits waiting at the same time. ctx
// bounds the wait for a connection; once its commit is sent, the outcome is waited for.
func (s *Store) commitGrouped(ctx context.Context, c *pgGroupCommit) error {
	s.group.arrive(c)
	defer s.group.leave()
	for {
		if !s.group.waiting(c) {
			return <-c.done // taken by a group: this goroutine's or another's
		}
		if gathering := s.group.underway(); gathering != nil {
			// Another commit gathers a group: this one is in it, unless pgGroupMax left it out.
			select {
			case <-gathering:
				continue
			case <-ctx.Done():
			}
		}
		conn, err := s.pool.Acquire(ctx)
		if err != nil {
			if s.group.withdraw(c) {
				return err
			}
			return <-c.done // another request's group carries it
		}
		if batch := s.group.gatherAndTake(); len(batch) > 0 {
			s.sendGroup(conn, batch)
		}
		conn.Release()
	}
}

// sendGroup sends a group of commits in one round trip on conn and tells each its outcome.
func (s *Store) sendGroup(conn *pgxpool.Conn, batch []*pgGroupCommit) {
	// Not cancelled by any request's ctx: see Commit.
	ctx, cancel := context.WithTimeout(context.Background(), pgCommitTimeout)
	defer cancel()
	outcome := make([]error, len(batch))
	defer func() {
		for i, c := range batch {
			c.done <- outcome[i]
		}
	}()
	fail := func(err error) {
		for i := range outcome {
			if outcome[i] == nil {
				outcome[i] = err
			}
		}
	}

	pc := conn.Conn()
	// The commits that can go in one merged write (merge.go) do; each other is a transaction
	// of its own after it.
	var merge pgMerge
	var merged, own []int // indexes in batch; merged in the order of their numbers in merge
	for i, c := range batch {
		if c.merge && merge.add(c.plan) {
			merged = append(merged, i)
		} else {
			own = append(own, i)
		}
	}
	var mergeStmt *pgBound
	if merge.worthIt() {
		b, err := merge.bind(ctx, pc)
		var ee *pgEncodeError
		switch {
		case errors.As(err, &ee): // each on its own, to fail alone
		case err != nil:
			fail(err)
			return
		default:
			mergeStmt = b
			s.merged.Add(int64(len(merged)))
		}
	}
	if mergeStmt == nil {
		own, merged = append(own, merged...), nil
		slices.Sort(own)
	}
	multi := len(own) > 1 || len(own) == 1 && mergeStmt != nil
	var asyncStmt, flushStmt *pgBound
	if multi {
		var err error
		if asyncStmt, err = bindStatement(ctx, pc, pgStatement{sql: pgAsyncSQL}); err != nil {
			fail(err)
			return
		}
		if flushStmt, err = bindStatement(ctx, pc, pgStatement{sql: pgFlushSQL}); err != nil {
			fail(err)
			return
		}
	}
	// Prepared once per connection (pgx keeps them by their text), bound here: an argument
	// that cannot be encoded fails its own commit only.
	bound := make([][]*pgBound, len(batch))
	for _, i := range own {
		for _, st := range batch[i].pipeline().stmts {
			b, err := bindStatement(ctx, pc, st)
			var ee *pgEncodeError
			if err != nil && !errors.As(err, &ee) {
				fail(err) // the connection failed
				return
			}
			if err != nil {
				outcome[i], bound[i] = err, nil
				break
			}
			bound[i] = append(bound[i], b)
		}
	}

	p := pc.PgConn().StartPipeline(ctx)
	if mergeStmt != nil {
		if multi {
			asyncStmt.send(p)
		}
		mergeStmt.send(p)
		p.SendPipelineSync()
	}
	var sentOwn []int
	for _, i := range own {
		if outcome[i] != nil {
			continue
		}
		sentOwn = append(sentOwn, i)
		if multi {
			asyncStmt.send(p)
		}
		for _, b := range bound[i] {
			b.send(p)
		}
		p.SendPipelineSync()
	}
	if multi {
		flushStmt.send(p)
		p.SendPipelineSync()
	}
	s.groups.Add(1)
	if err := p.Flush(); err != nil {
		fail(err)
		_ = p.Close()
		return
	}
	if mergeStmt != nil {
		failures, failed, connErr := readMerged(p, multi)
		if connErr != nil {
			fail(connErr)
			_ = p.Close()
			return
		}
		for k, i := range merged {
			outcome[i] = cmp.Or(failed, failures.err(int32(k+1))) //nolint:gosec // a group is pgGroupMax commits at most
		}
	}
	for _, i := range sentOwn {
		failed, connErr := readTransaction(p, batch[i].q, multi)
		if connErr != nil {
			fail(connErr) // the connection failed: the outcome of the rest is unknown
			_ = p.Close()
			return
		}
		outcome[i] = failed
	}
	if multi {
		// Until the flush, none of the group's commits is known to be durable.
		failed, connErr := readTransaction(p, &pgPipeline{stmts: []pgStatement{{sql: pgFlushSQL}}}, false)
		if err := errors.Join(failed, connErr); err != nil {
			fail(err) // every commit sent (those not sent failed already)
		}
	}
	_ = p.Close()
}

// pgEncodeError is an argument of a commit's statement that could not be encoded: that
// commit fails, not its group.
type pgEncodeError struct{ err error }

func (e *pgEncodeError) Error() string { return "encode arguments: " + e.err.Error() }
func (e *pgEncodeError) Unwrap() error { return e.err }

// pgBound is a statement prepared on a connection with its arguments encoded.
type pgBound struct {
	name          string
	values        [][]byte
	formats       []int16
	resultFormats []int16
}

// bindStatement prepares st on conn (once: pgx keeps prepared statements by their text) and
// encodes its arguments.
func bindStatement(ctx context.Context, conn *pgx.Conn, st pgStatement) (*pgBound, error) {
	sd, err := conn.Prepare(ctx, st.sql, st.sql)
	if err != nil {
		return nil, err
	}
	var eqb pgx.ExtendedQueryBuilder
	if err := eqb.Build(conn.TypeMap(), sd, st.args); err != nil {
		return nil, &pgEncodeError{err}
	}
	// The builder reuses its buffers: keep copies.
	values := make([][]byte, len(eqb.ParamValues))
	for i, v := range eqb.ParamValues {
		if v != nil {
			values[i] = append([]byte{}, v...)
		}
	}
	return &pgBound{name: sd.Name, values: values,
		formats: append([]int16{}, eqb.ParamFormats...), resultFormats: append([]int16{}, eqb.ResultFormats...)}, nil
}

// send queues the statement on the pipeline.
func (b *pgBound) send(p *pgconn.Pipeline) {
	p.SendQueryPrepared(b.name, b.values, b.formats, b.resultFormats)
}

// readTransaction reads the results of one transaction of a group, through its Sync: failed is
// nil when it committed, else why not (a failed check as q maps it); connErr is the error of
// a connection that failed on the way. async says it starts with pgAsyncSQL.
func readTransaction(p *pgconn.Pipeline, q *pgPipeline, async bool) (failed, connErr error) {
	n := len(q.stmts)
	if async {
		n++
	}
	for j := 0; j < n && failed == nil; j++ {
		res, err := p.GetResults()
		if err == nil {
			rr, ok := res.(*pgconn.ResultReader)
			if !ok {
				return nil, fmt.Errorf("pipeline: got %T, want a statement's result", res)
			}
			_, err = rr.Close()
		}
		if err == nil {
			continue
		}
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			return nil, err
		}
		if i := j - n + len(q.stmts); i >= 0 {
			failed = q.failed(i, err)
		} else {
			failed = err
		}
	}
	endFailed, connErr := endTransaction(p)
	if connErr != nil {
		return nil, connErr
	}
	if failed == nil {
		failed = endFailed // the commit itself failed
	}
	return failed, nil
}

// endTransaction reads a transaction's results through the Sync that ends it (the server
// skipped what a failure left): failed is the error of its commit, connErr that of a
// connection that failed on the way.
func endTransaction(p *pgconn.Pipeline) (failed, connErr error) {
	for {
		res, err := p.GetResults()
		var pe *pgconn.PgError
		switch {
		case errors.As(err, &pe):
			if failed == nil {
				failed = err
			}
			continue
		case err != nil:
			return nil, err
		}
		switch res.(type) {
		case *pgconn.PipelineSync:
			return failed, nil
		case nil:
			return nil, errors.New("pipeline: the transaction's end is missing")
		default:
			return nil, fmt.Errorf("pipeline: got %T, want the transaction's end", res)
		}
	}
}
