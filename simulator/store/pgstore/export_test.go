package pgstore

// GroupTrips is how many round trips sent the requests' commits of s (group.go).
func GroupTrips(s *Store) int64 { return s.groups.Load() }

// MergedCommits counts the commits sent as parts of a merged write.
func MergedCommits(s *Store) int64 { return s.merged.Load() }

// PendingCommits is how many requests' commits of s wait for a connection.
func PendingCommits(s *Store) int {
	s.group.mu.Lock()
	defer s.group.mu.Unlock()
	return len(s.group.pending)
}

// FlushSQL is the last transaction of a group of several commits (group.go).
const FlushSQL = pgFlushSQL

// Name is the name of s's lease, the owner its commits record on the objects they leave due
// (claim.go).
func Name(s *Store) string { return s.notes.from }
