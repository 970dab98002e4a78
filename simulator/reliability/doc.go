// Package reliability holds lifecyclesim's reliability suite (tests only): a kill -9 workload
// checked against a ledger of acknowledged operations, conflicting-action storms checked for
// linearizability with porcupine, a fuzz target on the HTTP handler, and tenant-isolation and
// resource-limit checks. `make reliability` runs the full version and prints one table; `go
// test` runs a short one.
package reliability
