package client

import "github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"

// The API's shapes are defined once, in package wire, which the server imports too; these
// aliases keep the client's names.
type (
	// Object is the one shape every simulated object has on the wire.
	Object = wire.Object
	// Operation is the action running on an object.
	Operation = wire.Operation
	// Event is one entry of an object's transition history.
	Event = wire.Event
	// ObjectList is one page of a list.
	ObjectList = wire.ObjectList
	// EventList is an object's history.
	EventList = wire.EventList
	// CreateRequest creates an object.
	CreateRequest = wire.CreateRequest
	// ActionRequest runs an action; Params are merged into the spec.
	ActionRequest = wire.ActionRequest
	// PatchRequest changes spec fields; a null value removes a field.
	PatchRequest = wire.PatchRequest
	// FaultRule injects failures into matching transitions or requests.
	FaultRule = wire.FaultRule
	// FaultList lists fault rules.
	FaultList = wire.FaultList
	// ClockState is the simulator's clock.
	ClockState = wire.ClockState
	// ClockAdvance moves the clock forward.
	ClockAdvance = wire.ClockAdvance
	// ErrorBody is the error envelope of every failed request.
	ErrorBody = wire.ErrorBody
	// ErrorDetail describes a failed request.
	ErrorDetail = wire.ErrorDetail
	// SimConfig is the simulator's runtime configuration (PUT /v1/sim/config).
	SimConfig = wire.SimConfig
	// ImportResult is what an import restored (POST /v1/sim/import).
	ImportResult = wire.ImportResult
)

type (
	// JournalEntry is one request of the tenant's request journal.
	JournalEntry = wire.JournalEntry
	// JournalList is the answer of a read of the request journal.
	JournalList = wire.JournalList
)

// StatusUnapplied is the status key of an object whose failed update is not applied: its
// value holds each such spec field's last applied value under "applied" (see wire).
const StatusUnapplied = wire.StatusUnapplied
