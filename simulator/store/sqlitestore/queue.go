package sqlitestore

import (
	"runtime"
	"sync"
	"time"
)

// journal queues records for the writer goroutine.
type journal struct {
	mu      sync.Mutex
	pending []*record
	// waiting counts the pending records whose commits wait for them (not Background ones);
	// while fill holds a group back, want is how many it waits for (0 otherwise), and a push
	// wakes the writer only once they are queued.
	waiting, want int
	seq           uint64
	closed        bool
	wake          chan struct{}
}

func (j *journal) init() { j.wake = make(chan struct{}, 1) }

// next numbers the next record (the caller holds the table's lock, so numbers follow the
// order records are pushed in).
func (j *journal) next() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.seq++
	return j.seq
}

func (j *journal) push(r *record) {
	j.mu.Lock()
	j.pending = append(j.pending, r)
	if r.done != nil {
		j.waiting++
	}
	wake := j.waiting >= j.want
	j.mu.Unlock()
	if wake {
		j.signal()
	}
}

// signal wakes the writer if it waits (a wake-up is kept until it looks).
func (j *journal) signal() {
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

// take waits up to wait for queued records and takes them all; closed reports that the
// journal is closed and empty.
func (j *journal) take(wait time.Duration) (rs []*record, closed bool) {
	if rs, closed = j.takeQueued(); len(rs) > 0 || closed {
		return rs, closed && len(rs) == 0
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-j.wake:
		case <-timer.C:
			return nil, false
		}
		if rs, closed = j.takeQueued(); len(rs) > 0 || closed {
			return rs, closed && len(rs) == 0
		}
	}
}

// takeQueued takes what is queued, and reports whether the journal is closed.
func (j *journal) takeQueued() (rs []*record, closed bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	rs, j.pending, j.waiting = j.pending, nil, 0
	return rs, j.closed
}

// fill holds a group back, up to groupWait, until want commits wait for it, and returns it
// with what was queued meanwhile. want is about the most commits that waited for one group
// lately (see write): clients that commit at about the same time, 16 clients acting in a loop
// say, come back within a sync or two of each other, and one sync for all of them costs less
// CPU than one for each part of them (a sync took 60 to 100 µs of CPU here, most of it the
// kernel's: about what an action's own work takes). Holding the group back takes no CPU from
// those requests. At one client want is one: its commits never wait, and the worker's
// Background records wait (at most groupWait) for its next one instead of a sync of their own.
func (j *journal) fill(rs []*record, want int) []*record {
	have := waiting(rs)
	if have >= want {
		return rs
	}
	j.mu.Lock()
	j.want = want - have
	j.mu.Unlock()
	defer func() {
		j.mu.Lock()
		j.want = 0
		j.mu.Unlock()
	}()
	timer := time.NewTimer(groupWait)
	defer timer.Stop()
	for have < want {
		select {
		case <-j.wake:
		case <-timer.C:
			more, _ := j.takeQueued()
			return append(rs, more...)
		}
		more, closed := j.takeQueued()
		rs = append(rs, more...)
		have += waiting(more)
		if closed {
			break // Close writes what is queued without waiting for more
		}
		j.mu.Lock()
		j.want = want - have
		j.mu.Unlock()
	}
	return rs
}

// groupWait bounds how long fill holds a group back: a few syncs' time (one takes about
// 0.2 ms on the disks measured), so that a request that comes alone after a busy spell waits
// little more than it would have anyway. Measured with lifecyclesim on one CPU (benchcompare,
// actions on 512 objects, 12 rounds): at 16 clients 11.5 commits a sync instead of 7 and 8%
// less CPU per accepted action; at one client, whose every action the worker's landing
// followed with a sync of its own, 37% more actions a second at 24% less CPU each.
const groupWait = time.Millisecond

// waiting counts the records whose commits wait for them (not Background ones).
func waiting(rs []*record) int {
	n := 0
	for _, r := range rs {
		if r.done != nil {
			n++
		}
	}
	return n
}

// gather lets the goroutines that can run reach their commits before a group is written, and
// adds what they queue. The writer waits for its sync inside a system call, and a goroutine in
// a system call keeps its P until the runtime's monitor takes it back, up to 10 ms later after
// a quiet spell: with one P (one CPU) nothing else runs meanwhile, and what was not queued
// before the sync began waits for the next one. Yielding costs nothing when no one else can
// run; it stops once a yield brings nothing.
func (j *journal) gather(rs []*record) []*record {
	for range gatherYields {
		runtime.Gosched()
		more, _ := j.takeQueued()
		if len(more) == 0 {
			break
		}
		rs = append(rs, more...)
	}
	return rs
}

// gatherYields bounds the yields of one gather, so a steady stream of commits cannot hold a
// group back.
const gatherYields = 4

func (j *journal) close() {
	j.mu.Lock()
	j.closed = true
	j.mu.Unlock()
	j.signal()
}

// answer tells the records' waiters how their commit ended.
func answer(rs []*record, err error) {
	for _, r := range rs {
		if r.done != nil {
			r.done <- err
		}
	}
}
