// Package httpapi is lifecyclesim's HTTP layer: the /v1 routes over an engine, bearer-token
// auth and tenants, request limits and deadlines, request logs, Prometheus metrics, the
// OpenAPI document and its reference page, health probes, the dashboard's routes, and the
// mounts of the dialects (the seed systems' native APIs: /blazar/v1, /identity, /sahara with
// /network).
//
// It is the only package of the simulator that imports labstack/echo and the Prometheus
// client. It reaches the engine through its exported methods only, and answers every error
// in the API's envelope with the status wire.StatusOf gives its code (answerOf, the one
// place codes meet statuses). It imports engine, store (for metrics and filters), wire,
// dashboard and lifecycle; nothing but the binary and the test kit imports it.
package httpapi
