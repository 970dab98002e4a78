// Package blazar serves OpenStack Blazar's lease API (v1) over the simulator's engine, so the
// real `openstack reservation lease` commands drive the simulator's lease kind: GET and POST
// /leases, GET, PUT and DELETE /leases/{id}. Leases are answered as Blazar answers them
// ({"lease": …} and {"leases": […]}, reservations and events nested, UUID IDs, dates as
// YYYY-MM-DDTHH:MM:SS.ffffff) and errors as {"error_code", "error_message", "error_name"}.
// The leases are the engine's lease objects: the same objects, with the same history, as
// through /v1 and the dashboard.
package blazar

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect/names"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// Blazar's date formats: what requests carry (API_DATE_FORMAT; "now" for a start) and what
// answers give (LEASE_DATE_FORMAT: `set --prolong-for` parses it).
const (
	requestDate = "2006-01-02 15:04"
	answerDate  = "2006-01-02T15:04:05.000000"
)

// The built-in kinds the dialect serves.
const (
	leaseKind       = "lease"
	reservationKind = "reservation"
	eventKind       = "event"
)

// maxBody bounds a request body (a lease with 100 reservations is a few KiB).
const maxBody = 1 << 20

// requestBody reads a request body as Blazar does.
var requestBody = dialect.Body{Limit: maxBody, TooLarge: "RequestEntityTooLarge", Malformed: "MalformedRequestBody"}

// Handler serves Blazar's v1 API under the prefix it is mounted at (/blazar/v1).
type Handler struct {
	eng     *engine.Engine
	tenants dialect.Tenants
	mux     *http.ServeMux
	// names serialises a tenant's check for a free lease name with the create that takes it
	// (on this process; replicas sharing a store may race it, as two Blazar API workers can).
	names names.Index
}

// New returns the Blazar dialect over eng; tenants resolves the callers' X-Auth-Token.
func New(eng *engine.Engine, tenants dialect.Tenants) *Handler {
	h := &Handler{eng: eng, tenants: tenants, mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /leases", h.list)
	h.mux.HandleFunc("POST /leases", h.create)
	h.mux.HandleFunc("GET /leases/{id}", h.get)
	h.mux.HandleFunc("PUT /leases/{id}", h.update)
	h.mux.HandleFunc("DELETE /leases/{id}", h.delete)
	return h
}

// ServeHTTP implements http.Handler: it resolves the caller's tenant, applies the tenant's
// http_error fault rules for leases, and routes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tenant, err := h.tenants.TenantOf(r.Header.Get("X-Auth-Token"))
	if err != nil {
		writeError(w, err)
		return
	}
	if f := h.eng.Faults().Match(r.Context(), wire.FaultHTTPError, tenant, leaseKind, "", ""); f != nil {
		writeError(w, dialect.InjectedError(f))
		return
	}
	if _, pattern := h.mux.Handler(r); pattern == "" {
		writeError(w, &dialect.Error{Status: http.StatusNotFound, Name: "NotFound",
			Message: fmt.Sprintf("%s %s is not part of the Blazar API the simulator serves (GET/POST /leases, GET/PUT/DELETE /leases/{id})", r.Method, r.URL.Path)})
		return
	}
	h.mux.ServeHTTP(w, dialect.WithTenant(r, tenant))
}

// kinds returns the lease kind.
func (h *Handler) lease() (*lifecycle.Kind, error) {
	k, err := h.eng.Registry().Kind(leaseKind)
	if err != nil {
		return nil, &dialect.Error{Status: http.StatusNotFound, Name: "NotFound", Message: "this simulator serves no lease kind"}
	}
	return k, nil
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) {
	ctx, tenant := r.Context(), dialect.Tenant(r)
	leases, err := h.eng.List(ctx, tenant, engine.ListOptions{Kind: leaseKind})
	if err != nil {
		writeError(w, err)
		return
	}
	kids := map[string][]*engine.Object{}
	for _, kind := range []string{reservationKind, eventKind} {
		objs, err := h.eng.List(ctx, tenant, engine.ListOptions{Kind: kind})
		if err != nil {
			writeError(w, err)
			return
		}
		for _, o := range objs {
			kids[o.ParentID] = append(kids[o.ParentID], o)
		}
	}
	out := make([]Lease, 0, len(leases))
	for _, l := range leases {
		out = append(out, h.answer(l, kids[l.ID]))
	}
	dialect.JSON(w, http.StatusOK, map[string]any{"leases": out})
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	l, kids, err := h.read(r.Context(), dialect.Tenant(r), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	dialect.JSON(w, http.StatusOK, map[string]any{"lease": h.answer(l, kids)})
}

// read reads a lease and its children by the lease's UUID.
func (h *Handler) read(ctx context.Context, tenant, uuid string) (*engine.Object, []*engine.Object, error) {
	k, err := h.lease()
	if err != nil {
		return nil, nil, err
	}
	id, ok := dialect.IDOf(leaseKind, uuid)
	if !ok {
		return nil, nil, notFound(uuid)
	}
	l, err := h.eng.Get(ctx, tenant, k, id)
	if err != nil {
		return nil, nil, notFoundOr(uuid, err)
	}
	kids, err := h.eng.List(ctx, tenant, engine.ListOptions{ParentID: id})
	if err != nil {
		return nil, nil, err
	}
	return l, kids, nil
}

// createRequest is what `openstack reservation lease create` sends.
type createRequest struct {
	Name          string           `json:"name"`
	StartDate     string           `json:"start_date"`
	EndDate       string           `json:"end_date"`
	Reservations  []map[string]any `json:"reservations"`
	Events        []map[string]any `json:"events"`
	BeforeEndDate *string          `json:"before_end_date"`
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) {
	k, err := h.lease()
	if err != nil {
		writeError(w, err)
		return
	}
	var req createRequest
	if err := requestBody.Decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	spec, err := createSpec(k, req)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, tenant := r.Context(), dialect.Tenant(r)
	o, kids, err := h.createNamed(ctx, tenant, k, req.Name, spec, r.Header.Get("Idempotency-Key"))
	if err != nil {
		writeError(w, err)
		return
	}
	dialect.JSON(w, http.StatusCreated, map[string]any{"lease": h.answer(o, kids)})
}

// createNamed creates the lease unless the tenant has one of that name (Blazar's names are
// unique per project), with its children. A retry with the Idempotency-Key of a create that
// made it gets it.
func (h *Handler) createNamed(ctx context.Context, tenant string, k *lifecycle.Kind, name string, spec map[string]any, key string) (*engine.Object, []*engine.Object, error) {
	req := wire.CreateRequest{Name: name, Spec: spec}
	tn := h.names.Of(tenant)
	tn.Lock()
	defer tn.Unlock()
	// A retry answers what its first attempt made, though the name is taken now.
	if o, ok, err := h.eng.Created(ctx, tenant, k, req, key); err != nil || ok {
		if err != nil {
			return nil, nil, err
		}
		return h.withChildren(ctx, tenant, o)
	}
	taken, err := tn.Lookup(ctx, h.eng, tenant, k, name, false)
	if err != nil {
		return nil, nil, err
	}
	if taken != nil {
		return nil, nil, &dialect.Error{Status: http.StatusConflict, Name: "LeaseNameAlreadyExists",
			Message: fmt.Sprintf("The lease with name: %s already exists", name)}
	}
	// The children come from the create's own commit: no read back.
	o, kids, made, err := h.eng.CreateFamily(ctx, tenant, k, req, key)
	if err != nil {
		return nil, nil, err
	}
	tn.Add(name, o.ID)
	if !made {
		return h.withChildren(ctx, tenant, o)
	}
	return o, kids, nil
}

// withChildren reads a lease's children.
func (h *Handler) withChildren(ctx context.Context, tenant string, o *engine.Object) (*engine.Object, []*engine.Object, error) {
	kids, err := h.eng.List(ctx, tenant, engine.ListOptions{ParentID: o.ID})
	return o, kids, err
}

// createSpec translates a create request into the lease kind's spec: Blazar's dates to RFC
// 3339 ("now" or no start means now), the reservations' string values to their declared types.
func createSpec(k *lifecycle.Kind, req createRequest) (map[string]any, error) {
	if strings.TrimSpace(req.Name) == "" {
		return nil, &dialect.Error{Status: http.StatusBadRequest, Name: "MissingParameter", Message: "Missing parameter name"}
	}
	if len(req.Events) > 0 {
		return nil, &dialect.Error{Status: http.StatusBadRequest, Name: "InvalidInput",
			Message: "events in a lease request are not modelled: the simulator makes a lease's start_lease, end_lease and before_end_lease events from its dates; drop --event"}
	}
	if req.BeforeEndDate != nil && *req.BeforeEndDate != "" {
		return nil, &dialect.Error{Status: http.StatusBadRequest, Name: "InvalidInput",
			Message: "before_end_date is not modelled: the simulator's before_end_lease event is 60 minutes before end_date (Blazar's default minutes_before_end_lease), or at start_date for a shorter lease; drop --before-end-date"}
	}
	spec := map[string]any{}
	if req.StartDate != "now" && req.StartDate != "" {
		t, err := parseDate("start_date", req.StartDate)
		if err != nil {
			return nil, err
		}
		spec["start_date"] = t
	}
	if req.EndDate == "" {
		return nil, &dialect.Error{Status: http.StatusBadRequest, Name: "MissingParameter", Message: "Missing parameter end_date"}
	}
	end, err := parseDate("end_date", req.EndDate)
	if err != nil {
		return nil, err
	}
	spec["end_date"] = end
	if len(req.Reservations) > 0 {
		items, err := reservationSpecs(k, req.Reservations)
		if err != nil {
			return nil, err
		}
		spec["reservations"] = items
	}
	return spec, nil
}

// parseDate reads a date as Blazar's API takes it (YYYY-MM-DD HH:MM, UTC) and gives it as
// the kind's RFC 3339.
func parseDate(field, s string) (string, error) {
	t, err := time.Parse(requestDate, s)
	if err != nil {
		return "", &dialect.Error{Status: http.StatusBadRequest, Name: "InvalidDate",
			Message: fmt.Sprintf("%s is an invalid date. Required format: %s (the %s field)", s, "%Y-%m-%d %H:%M", field)}
	}
	return t.UTC().Format(time.RFC3339), nil
}

// reservationSpecs gives each reservation the values its declared fields take: the CLI sends
// every value as a string ("1", "True", "None"). Keys the kind does not model (a floating IP's
// network_id, before_end) and unset values ("", "None", null, []) are left out.
func reservationSpecs(k *lifecycle.Kind, reqs []map[string]any) ([]any, error) {
	f, ok := k.Field("reservations")
	if !ok || f.Items == nil {
		return nil, &dialect.Error{Status: http.StatusBadRequest, Name: "InvalidInput", Message: "this simulator's lease kind takes no reservations"}
	}
	out := make([]any, 0, len(reqs))
	for i, req := range reqs {
		item := map[string]any{}
		for key, v := range req {
			decl := slices.IndexFunc(f.Items.Fields, func(d lifecycle.Field) bool { return d.Name == key })
			if decl < 0 || unset(v) {
				continue
			}
			val, err := coerce(f.Items.Fields[decl].Type, v)
			if err != nil {
				return nil, &dialect.Error{Status: http.StatusBadRequest, Name: "InvalidInput",
					Message: fmt.Sprintf("reservations[%d].%s: %v", i, key, err)}
			}
			item[key] = val
		}
		out = append(out, item)
	}
	return out, nil
}

func unset(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == "" || v == "None"
	case []any:
		return len(v) == 0
	}
	return false
}

// coerce turns a CLI value into the declared type.
func coerce(t lifecycle.FieldType, v any) (any, error) {
	s, isString := v.(string)
	switch {
	case !isString:
		return v, nil
	case t == lifecycle.TypeInteger:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", s)
		}
		return n, nil
	case t == lifecycle.TypeBool:
		b, err := strconv.ParseBool(strings.ToLower(s))
		if err != nil {
			return nil, fmt.Errorf("%q is not True or False", s)
		}
		return b, nil
	}
	return s, nil
}

// updateRequest is what `openstack reservation lease set` sends (the client turns
// --prolong-for and the like into dates itself).
type updateRequest struct {
	Name         *string          `json:"name"`
	StartDate    *string          `json:"start_date"`
	EndDate      *string          `json:"end_date"`
	Reservations []map[string]any `json:"reservations"`
}

func (h *Handler) update(w http.ResponseWriter, r *http.Request) {
	ctx, tenant, uuid := r.Context(), dialect.Tenant(r), r.PathValue("id")
	var req updateRequest
	if err := requestBody.Decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	l, _, err := h.read(ctx, tenant, uuid)
	if err != nil {
		writeError(w, err)
		return
	}
	if req.Name != nil && *req.Name != l.Name {
		writeError(w, &dialect.Error{Status: http.StatusBadRequest, Name: "InvalidInput",
			Message: "renaming a lease is not modelled: the simulator's names are fixed at create"})
		return
	}
	if len(req.Reservations) > 0 {
		writeError(w, &dialect.Error{Status: http.StatusBadRequest, Name: "InvalidInput",
			Message: "changing a lease's reservations is not modelled: create a new lease"})
		return
	}
	spec := map[string]any{}
	for field, v := range map[string]*string{"start_date": req.StartDate, "end_date": req.EndDate} {
		if v == nil {
			continue
		}
		d := *v
		if field == "start_date" && d == "now" {
			d = h.eng.Clock().Now().UTC().Format(requestDate)
		}
		t, err := parseDate(field, d)
		if err != nil {
			writeError(w, err)
			return
		}
		spec[field] = t
	}
	if len(spec) > 0 {
		k, err := h.lease()
		if err != nil {
			writeError(w, err)
			return
		}
		if _, err := h.eng.Patch(ctx, tenant, k, l.ID, 0, spec); err != nil {
			writeError(w, notFoundOr(uuid, err))
			return
		}
	}
	l, kids, err := h.read(ctx, tenant, uuid)
	if err != nil {
		writeError(w, err)
		return
	}
	dialect.JSON(w, http.StatusOK, map[string]any{"lease": h.answer(l, kids)})
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	k, err := h.lease()
	if err != nil {
		writeError(w, err)
		return
	}
	uuid := r.PathValue("id")
	id, ok := dialect.IDOf(leaseKind, uuid)
	if !ok {
		writeError(w, notFound(uuid))
		return
	}
	if _, err := h.eng.Delete(r.Context(), dialect.Tenant(r), k, id, ""); err != nil {
		writeError(w, notFoundOr(uuid, err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
