package wire

import "time"

// JournalEntry is one request of a tenant's request journal (GET /v1/sim/journal): what was
// sent and what it was answered, kept in a bounded ring per tenant.
type JournalEntry struct {
	// Seq numbers a tenant's requests from 1, in the order they were answered.
	Seq int64 `json:"seq"`
	// Time is when the answer was sent, on the simulator's clock.
	Time   time.Time `json:"time"`
	Method string    `json:"method"`
	Path   string    `json:"path"`
	Query  string    `json:"query,omitempty"`
	Status int       `json:"status"`
	// DurationMS is how long the request took, in milliseconds of the wall clock.
	DurationMS float64 `json:"duration_ms"`
	RequestID  string  `json:"request_id"`
	// IdempotencyKey is the request's Idempotency-Key, when it sent one.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	UserAgent      string `json:"user_agent,omitempty"`
	// ErrorCode and ErrorMessage are an error answer's code and message.
	ErrorCode    string `json:"error_code,omitempty"`
	ErrorMessage string `json:"error_message,omitempty"`
	// RequestBody and ResponseBody hold the bodies, cut at the simulator's
	// --journal-body-bytes (none when 0); BodiesCut says a body was cut.
	RequestBody  string `json:"request_body,omitempty"`
	ResponseBody string `json:"response_body,omitempty"`
	BodiesCut    bool   `json:"bodies_cut,omitempty"`
}

// JournalList is the answer of GET /v1/sim/journal: the entries that match, oldest first.
type JournalList struct {
	Items []JournalEntry `json:"items"`
	// Size is how many entries the tenant's journal keeps; Dropped how many older ones it has
	// let go (the first kept entry's Seq is Dropped+1).
	Size    int   `json:"size"`
	Dropped int64 `json:"dropped"`
}
