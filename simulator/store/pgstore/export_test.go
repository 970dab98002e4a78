package pgstore

import "time"

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

// SetVacuumEvery sets how often s vacuums the schedule while it writes to it (vacuum.go).
func SetVacuumEvery(s *Store, d time.Duration) {
	s.vacuum.mu.Lock()
	defer s.vacuum.mu.Unlock()
	s.vacuum.every = d
}

// Vacuums is how many vacuums of the schedule s has done.
func Vacuums(s *Store) int64 { return s.vacuum.runs.Load() }
