// Package table is the ordered in-memory table the memory and SQLite stores serve their reads
// from: every object encoded, indexed by ID, kind, parent, kind and state, due time and linked
// spec fields, with the compare-and-set check of a batch. It knows no database: a store
// applies a batch's writes to it under its lock after it made them durable its own way.
package table
