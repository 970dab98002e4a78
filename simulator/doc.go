// Package simulator is the root of lifecyclesim, an HTTP API (labstack/echo) serving objects
// whose lifecycles follow the state machines of package lifecycle. This package holds no
// code: its tests drive the layers together (over HTTP, through the test kit), and TestLayers
// keeps the layers importing only downward:
//
//	cmd/lifecyclesim  the binary: wires a store backend, the engine and the HTTP layer
//	simtest           test kit: an in-process simulator in one call (any layer, the client)
//	httpapi           HTTP: routes, auth, limits, request logs, metrics, OpenAPI, docs, dashboard routes;
//	                  the only importer of echo and Prometheus; maps wire codes to statuses once;
//	                  speaks only to the engine (imports no store package)
//	dialect           the seed systems' native APIs (blazar, keystone, sahara, tumblebug):
//	                  plain net/http handlers over the engine that httpapi mounts (/blazar/v1,
//	                  /identity, /sahara, /tumblebug); no echo, no store; the UUIDs they show are derived
//	                  from the engine's IDs
//	fixture           fixture files (--fixtures): objects created before serving through the engine's
//	                  own create, actions, timers and faults; checked with file:line; no HTTP, no backend
//	dashboard         the web dashboard's handler (wire, the store's session interface, standard library)
//	engine            state machines at work: accept, worker, phases, relations, faults, clock;
//	                  no HTTP, echo or Prometheus; its errors carry wire codes
//	store             the Store interface, its types and optional capabilities (standard library only);
//	                  storetest: the contract suite; internal/table and internal/codec: what backends share
//	store/memstore    the in-memory store (simtest's)
//	store/sqlitestore the SQLite store (modernc.org/sqlite); only the binary and tests import it
//	store/pgstore     the PostgreSQL store (pgx); only the binary and tests import it
//	wire              the API's shapes, error codes and their HTTP statuses (standard library only)
//	client            the Go client (go-retryablehttp); its types are wire's
//
// Transitions take time, one action runs at a time per object, every state change is an
// atomic compare-and-set in the store, failures follow each kind's rule, stuck transitions
// are healed, and faults can be injected.
package simulator
