package wire

import (
	"encoding/json"
	"time"
)

// Object is the one shape every simulated object has on the wire.
type Object struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	ParentID string `json:"parent_id,omitempty"`
	// State is the object's current state, static or transitional.
	State string `json:"state"`
	// Static is true when State is a static state and no operation runs.
	Static bool `json:"static"`
	// Spec holds the user-set fields.
	Spec map[string]any `json:"spec"`
	// Defaulted lists the paths of Spec the simulator filled in from the kind's declared
	// defaults (size, subgroups[0].count, settings.mode) rather than a client wrote: the rest
	// is what the creator and later PATCHes wrote. Null when the simulator does not know
	// (objects stored by a version before it, children made from their parent's spec).
	Defaulted []string `json:"defaulted"`
	// Status holds fields the system computes (an MCI's aggregated status, a last error...).
	Status map[string]any `json:"status"`
	// Operation is the action running, or nil.
	Operation *Operation `json:"operation"`
	// Version increases by one with every change; send it in If-Match to PATCH safely.
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// ReadAt is the server's time when it answered (its Date header; zero when absent). Not on
	// the wire: the client's Get sets it, so callers can tell how long an operation has been
	// running by the server's clock rather than their own.
	ReadAt time.Time `json:"-"`
}

// StatusUnapplied is the status key of an object whose kind's update action failed without
// rolling back (a cloudlet's upgrade left in UpdateError): the spec holds the values that
// update asked for, and the entry says they are not applied. Its value is an object with
// "action" and "operation_id" (the failed update) and "applied", each unapplied spec field
// with its last applied value (null when it was absent). A PATCH repeating those values is a
// change (it runs the update again); the entry goes when an update lands.
const StatusUnapplied = "unapplied"

// Operation is the action running on an object.
type Operation struct {
	ID     string `json:"id"`
	Action string `json:"action"`
	// From is the static state the action started from (where a rollback, or an action that
	// returns, lands).
	From string `json:"from,omitempty"`
	// Phase is the transition state the operation is in.
	Phase     string    `json:"phase"`
	StartedAt time.Time `json:"started_at"`
	// PhaseStartedAt is when the object entered Phase.
	PhaseStartedAt time.Time `json:"phase_started_at,omitzero"`
	// DueAt is when the current phase is expected to complete (zero while it hangs).
	DueAt time.Time `json:"due_at,omitzero"`
	// Error is set while the operation is failing (running its failure path).
	Error string `json:"error,omitempty"`
}

// Event is one entry of an object's transition history.
type Event struct {
	// Seq numbers the object's events from 1 without gaps.
	Seq         int64     `json:"seq"`
	ObjectID    string    `json:"object_id"`
	Time        time.Time `json:"time"`
	Actor       string    `json:"actor"`
	From        string    `json:"from,omitempty"`
	To          string    `json:"to"`
	Action      string    `json:"action,omitempty"`
	OperationID string    `json:"operation_id,omitempty"`
	Error       string    `json:"error,omitempty"`
	// Message explains system changes (self-healing, cascades).
	Message string `json:"message,omitempty"`
}

// ObjectList is one page of a list.
type ObjectList struct {
	Items []Object `json:"items"`
	// Next is the cursor of the next page; empty on the last page.
	Next string `json:"next,omitempty"`
}

// EventList is an object's history.
type EventList struct {
	Items []Event `json:"items"`
}

// CreateRequest creates an object.
type CreateRequest struct {
	Name     string         `json:"name"`
	ParentID string         `json:"parent_id,omitempty"`
	Spec     map[string]any `json:"spec,omitempty"`
	// Hold makes the object and leaves it in its kind's hold state, without starting the
	// create (CB-Tumblebug's option=hold): the action that continues the create starts it.
	Hold bool `json:"hold,omitempty"`
}

// ActionRequest runs an action; Params are merged into the spec (e.g. the machine_id a disk
// attaches to).
type ActionRequest struct {
	Force  bool           `json:"force,omitempty"`
	Params map[string]any `json:"params,omitempty"`
}

// PatchRequest changes spec fields; a null value removes a field.
type PatchRequest struct {
	Spec map[string]any `json:"spec"`
}

// FaultRule injects failures into matching transitions or requests.
type FaultRule struct {
	ID string `json:"id,omitempty"`
	// Kind, Action and Phase select what the rule matches; empty matches all.
	Kind   string `json:"kind,omitempty"`
	Action string `json:"action,omitempty"`
	Phase  string `json:"phase,omitempty"`
	// Mode is FaultFail, FaultHang, FaultSlow, FaultHTTPError or FaultDrop (skip a skippable
	// phase: a lost CRM message).
	Mode string `json:"mode"`
	// Factor multiplies phase durations in slow mode.
	Factor float64 `json:"factor,omitempty"`
	// HTTPStatus and Code are the answer in http_error mode (e.g. 503 and "unavailable").
	HTTPStatus int    `json:"http_status,omitempty"`
	Code       string `json:"code,omitempty"`
	// Message is the failure message in fail mode.
	Message string `json:"message,omitempty"`
	// Fatal makes a fail land in the action's fatal state instead of rolling back.
	Fatal bool `json:"fatal,omitempty"`
	// Probability of matching (0 or 1 means always), drawn from the simulator's seeded RNG.
	Probability float64 `json:"probability,omitempty"`
	// Count is how many times the rule fires before it is spent (0 means unlimited).
	Count int `json:"count,omitempty"`
	// Fired counts how often the rule has fired.
	Fired int `json:"fired"`
}

// FaultList lists fault rules.
type FaultList struct {
	Items []FaultRule `json:"items"`
}

// ClockState is the simulator's clock.
type ClockState struct {
	Now       time.Time `json:"now"`
	TimeScale float64   `json:"time_scale"`
}

// ClockAdvance moves the clock forward.
type ClockAdvance struct {
	// Advance is a Go duration string such as "1h".
	Advance string `json:"advance"`
}

// ErrorBody is the error envelope of every failed request.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail describes a failed request.
type ErrorDetail struct {
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Details json.RawMessage `json:"details,omitempty"`
	// RequestID names the request in the server's log, where a server error's detail is: set
	// in 5xx answers (every answer also carries it in HeaderRequestID).
	RequestID string `json:"request_id,omitempty"`
}

// SimConfig is the simulator's runtime configuration (PUT /v1/sim/config). Zero fields are
// left unchanged; the answer holds the values in force.
type SimConfig struct {
	// TimeScale multiplies every phase duration (0.01 makes a 2s phase take 20ms).
	TimeScale float64 `json:"time_scale,omitempty"`
	// HealAfter is how long an object may stay in a transition before self-healing repairs
	// it, as a Go duration string such as "5m".
	HealAfter string `json:"heal_after,omitempty"`
}

// MaxPage is the largest page of a list (GET /v1/{collection}?limit=N) the simulator serves.
const MaxPage = 1000

// ImportResult is the answer of POST /v1/sim/import: what the import restored into which
// tenant, and the simulator's clock after it (at or past the document's).
type ImportResult struct {
	Tenant     string    `json:"tenant"`
	Objects    int       `json:"objects"`
	Events     int       `json:"events"`
	FaultRules int       `json:"fault_rules"`
	Clock      time.Time `json:"clock"`
}
