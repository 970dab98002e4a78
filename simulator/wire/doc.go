// Package wire is the lifecyclesim API's wire contract: the JSON shapes of objects, events,
// requests, fault rules and the error envelope, the error codes, and the one map from each
// code to its HTTP status (StatusOf) and back (CodeOf).
//
// Both sides import it: the Go client (package client, which re-exports these names), the
// HTTP layer (package httpapi), the dashboard and the engine, whose errors carry these codes.
// It imports only the standard library and package lifecycle, and nothing of the simulator,
// so speaking the wire never links the server, the store or an HTTP framework.
package wire
