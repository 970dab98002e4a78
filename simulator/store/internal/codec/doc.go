// Package codec holds the encodings the store backends share: an object's packed form (what
// every backend stores as the object's data: packed.go) and its JSON (what the PostgreSQL
// store wrote before it, still read), the length-prefixed binary primitives of the SQLite
// journal and the memory store's event logs, and the due column (a due time as Unix
// nanoseconds, the order every backend schedules by) with a worker's round in tenant turns
// (InTurns). It imports package store and the standard library only.
package codec
