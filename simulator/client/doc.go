// Package client is the Go client of the lifecyclesim API: objects whose lifecycles follow the
// state machines of package lifecycle, their actions and history, the kind specs, and the
// simulator's control endpoints (faults, clock, reset).
//
// The client is built on hashicorp/go-retryablehttp. It retries connection errors, 429, 5xx
// (but not 501) and 409 busy, honouring Retry-After, and otherwise backs off exponentially with
// jitter. It never retries invalid_transition (422) or other 4xx answers. Every POST carries an
// Idempotency-Key generated once per call and reused by its retries, so a retry never applies
// an action twice.
//
// Failed calls return *Error, carrying the API's error code; match it with errors.As or the
// Is* helpers (IsNotFound, IsBusy, IsInvalidTransition, ...), never with message text.
//
// WaitStatic waits for an object to reach a static state: it long-polls
// (GET ?wait=static&timeout=...), falls back to capped exponential backoff with jitter when the
// server answers without waiting, tolerates a few transient errors, and names the last state
// seen when its context ends. CreateWait, ActWait and DeleteWait start an operation and wait
// for it on the same request (?wait=static): they return the server's first answer at once (a
// new object's ID is known before any wait) and a Watch whose Wait reads the object once it is
// static, going on with WaitStatic when that answer ends early.
//
// This package imports lifecycle but never the simulator server; the Terraform provider uses
// it and nothing else to reach the API.
package client
