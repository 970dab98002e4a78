package pgstore

import "context"

// GroupTrips is how many round trips sent the requests' commits of s (group.go).
func GroupTrips(s *Store) int64 { return s.groups.Load() }

// PendingCommits is how many requests' commits of s wait for a connection.
func PendingCommits(s *Store) int {
	s.group.mu.Lock()
	defer s.group.mu.Unlock()
	return len(s.group.pending)
}

// FlushSQL is the last transaction of a group of several commits (group.go).
const FlushSQL = pgFlushSQL

// SynchronousCommit is synchronous_commit in a session of s's worker connections (worker) or
// of its requests' connections.
func SynchronousCommit(ctx context.Context, s *Store, worker bool) (string, error) {
	pool := s.pool
	if worker {
		pool = s.work
	}
	var v string
	err := pool.QueryRow(ctx, "SHOW synchronous_commit").Scan(&v)
	return v, err
}
