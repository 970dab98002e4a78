package blazar

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// Lease is a lease as Blazar answers it.
type Lease struct {
	ID           string        `json:"id"`
	Name         string        `json:"name"`
	UserID       string        `json:"user_id"`
	ProjectID    string        `json:"project_id"`
	StartDate    string        `json:"start_date"`
	EndDate      string        `json:"end_date"`
	TrustID      string        `json:"trust_id"`
	Status       string        `json:"status"`
	Degraded     bool          `json:"degraded"`
	CreatedAt    string        `json:"created_at"`
	UpdatedAt    string        `json:"updated_at"`
	Reservations []Reservation `json:"reservations"`
	Events       []Event       `json:"events"`
}

// Reservation is a lease's reservation as Blazar answers it: its identity and status, and the
// values it was made with (min, max, amount, …) as the lease kind keeps them.
type Reservation struct {
	ID               string         `json:"id"`
	LeaseID          string         `json:"lease_id"`
	ResourceID       string         `json:"resource_id"`
	Status           string         `json:"status"`
	MissingResources bool           `json:"missing_resources"`
	ResourcesChanged bool           `json:"resources_changed"`
	CreatedAt        string         `json:"created_at"`
	UpdatedAt        string         `json:"updated_at"`
	Values           map[string]any `json:"-"`
}

// MarshalJSON flattens the reservation's values beside its identity, as Blazar does.
func (r Reservation) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(r.Values)+8)
	for k, v := range r.Values {
		m[k] = v
	}
	m["id"], m["lease_id"], m["resource_id"], m["status"] = r.ID, r.LeaseID, r.ResourceID, r.Status
	m["missing_resources"], m["resources_changed"] = r.MissingResources, r.ResourcesChanged
	m["created_at"], m["updated_at"] = r.CreatedAt, r.UpdatedAt
	return json.Marshal(m)
}

// Event is a lease's event as Blazar answers it.
type Event struct {
	ID        string `json:"id"`
	LeaseID   string `json:"lease_id"`
	EventType string `json:"event_type"`
	Time      string `json:"time"`
	Status    string `json:"status"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

// answer renders a lease and its children (reservations and events, whatever else the list
// holds is left out).
func (h *Handler) answer(l *engine.Object, kids []*engine.Object) Lease {
	uuid := uuidOf(l.ID)
	out := Lease{
		ID: uuid, Name: l.Name, ProjectID: project(l.Tenant), Status: l.State,
		StartDate: specDate(l.Spec, "start_date"), EndDate: specDate(l.Spec, "end_date"),
		CreatedAt: date(l.CreatedAt), UpdatedAt: date(l.UpdatedAt),
		Reservations: []Reservation{}, Events: []Event{},
	}
	for _, c := range kids {
		switch c.Kind {
		case reservationKind:
			out.Reservations = append(out.Reservations, Reservation{
				ID: uuidOf(c.ID), LeaseID: uuid, ResourceID: uuidOf(c.ID), Status: c.State,
				CreatedAt: date(c.CreatedAt), UpdatedAt: date(c.UpdatedAt), Values: c.Spec,
			})
		case eventKind:
			typ, _ := c.Spec["event_type"].(string)
			out.Events = append(out.Events, Event{
				ID: uuidOf(c.ID), LeaseID: uuid, EventType: typ, Time: specDate(c.Spec, "time"), Status: c.State,
				CreatedAt: date(c.CreatedAt), UpdatedAt: date(c.UpdatedAt),
			})
		}
	}
	// Events in time order, start_lease first (a short lease's before_end_lease is at its start).
	slices.SortStableFunc(out.Events, func(a, b Event) int {
		if a.Time != b.Time {
			if a.Time < b.Time {
				return -1
			}
			return 1
		}
		switch {
		case a.EventType == b.EventType:
			return 0
		case a.EventType == lifecycle.EventStartLease:
			return -1
		case b.EventType == lifecycle.EventStartLease:
			return 1
		}
		return 0
	})
	return out
}

// uuidOf is an engine ID's UUID (the ID itself for one the dialects cannot map, which no
// object made by the engine has).
func uuidOf(id string) string {
	if u, ok := dialect.UUID(id); ok {
		return u
	}
	return id
}

// project names a tenant as a Blazar project ("default" for the open tenant).
func project(tenant string) string {
	if tenant == "" {
		return "default"
	}
	return tenant
}

func specDate(spec map[string]any, field string) string {
	s, _ := spec[field].(string)
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return s
	}
	return date(t)
}

func date(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(answerDate)
}

// ErrorBody is Blazar's error answer.
type ErrorBody = dialect.OpenStackError

// errorAnswers answers errors as Blazar does: with its exception names, BlazarException for a
// server error; a lease that cannot move now (busy, or not from this status) is Blazar's 409
// InvalidStatus.
var errorAnswers = dialect.Errors{
	AsError: engine.AsError,
	Names: map[wire.Code]string{
		wire.CodeNotFound:          "NotFound",
		wire.CodeBusy:              "InvalidStatus",
		wire.CodeInvalidTransition: "InvalidStatus",
		wire.CodeConflict:          "InvalidStatus",
		wire.CodeInvalid:           "InvalidInput",
		wire.CodeUnauthorized:      "NotAuthorized",
		wire.CodeForbidden:         "NotAuthorized",
		wire.CodeRateLimited:       "TooManyRequests",
		wire.CodeUnavailable:       "ServiceUnavailable",
		wire.CodeTooLarge:          "RequestEntityTooLarge",
		wire.CodeKeyReused:         "InvalidInput",
	},
	ServerName: "BlazarException",
	Body:       dialect.OpenStackBody,
}

func writeError(w http.ResponseWriter, err error) { errorAnswers.Write(w, err) }

// notFound is Blazar's answer for a lease ID it does not hold.
func notFound(uuid string) error {
	return &dialect.Error{Status: http.StatusNotFound, Name: "NotFound", Message: fmt.Sprintf("Object with {'lease_id': '%s'} not found", uuid)}
}

// notFoundOr answers the engine's not_found for a lease as Blazar does, other errors as they are.
func notFoundOr(uuid string, err error) error {
	if engine.AsError(err).Code == wire.CodeNotFound {
		return notFound(uuid)
	}
	return err
}
