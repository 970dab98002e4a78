// Package tumblebug serves CB-Tumblebug's MCI API over the simulator's engine, as upstream
// (cloud-barista/cb-tumblebug v0.12.5) serves it under /tumblebug: GET /ns/{nsId}/mci, POST
// /ns/{nsId}/mciDynamic (?option=hold holds the MCI before provisioning, until the continue
// or withdraw action), GET and DELETE /ns/{nsId}/mci/{mciId} (?option=status answers
// {"status": MciStatusInfo}), and control as GET /ns/{nsId}/control/mci/{mciId}?action=, with
// the seed's POST /ns/{nsId}/mci/{mciId}?action= beside it. Callers authenticate with HTTP
// Basic auth, whose password is a tenant's token; the tenant's MCIs are the namespace
// "default", and an MCI's ID there is its name. Errors are Tumblebug's {"message": …}. The
// MCIs are the engine's mci objects: the same objects, with the same history, as through /v1
// and the dashboard.
package tumblebug

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect/names"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// The built-in kinds the dialect serves.
const (
	mciKind = "mci"
	vmKind  = "vm"
)

// Namespace is the one namespace the dialect serves: the caller's tenant.
const Namespace = "default"

// maxBody bounds a request body (an MCI of 100 subgroups is a few tens of KiB).
const maxBody = 1 << 20

// requestBody reads a request body as CB-Tumblebug does: only an MCI create has one, and it
// may not be empty.
var requestBody = dialect.Body{Limit: maxBody,
	Empty: &dialect.Error{Status: http.StatusBadRequest, Message: "the request body is empty: send an MCI dynamic request {name, subGroups}"}}

// actions are the MCI control actions upstream takes, in its order; vmActions a VM's.
var (
	actions   = []string{"suspend", "resume", "reboot", "terminate", "refine", "continue", "withdraw"}
	vmActions = []string{"suspend", "resume", "reboot", "terminate"}
)

// Handler serves CB-Tumblebug's MCI API under the prefix it is mounted at (/tumblebug).
type Handler struct {
	eng     *engine.Engine
	tenants dialect.Tenants
	mux     *http.ServeMux
	// names finds an MCI by its name (its ID in the namespace) and serialises a create's
	// check that the name is free with the create.
	names names.Index
}

// New returns the Tumblebug dialect over eng; tenants resolves the token in the callers'
// Basic auth password.
func New(eng *engine.Engine, tenants dialect.Tenants) *Handler {
	h := &Handler{eng: eng, tenants: tenants, mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /ns/{nsId}/mci", h.list)
	h.mux.HandleFunc("POST /ns/{nsId}/mciDynamic", h.create)
	h.mux.HandleFunc("GET /ns/{nsId}/mci/{mciId}", h.get)
	h.mux.HandleFunc("DELETE /ns/{nsId}/mci/{mciId}", h.delete)
	h.mux.HandleFunc("GET /ns/{nsId}/control/mci/{mciId}", h.control)
	h.mux.HandleFunc("POST /ns/{nsId}/mci/{mciId}", h.control) // the seed's form
	h.mux.HandleFunc("GET /ns/{nsId}/mci/{mciId}/vm/{vmId}", h.getVM)
	h.mux.HandleFunc("GET /ns/{nsId}/control/mci/{mciId}/vm/{vmId}", h.controlVM)
	h.mux.HandleFunc("POST /ns/{nsId}/mci/{mciId}/vm/{vmId}", h.controlVM) // the seed's form
	return h
}

// ServeHTTP implements http.Handler: it resolves the caller's tenant from Basic auth, checks
// the namespace, applies the tenant's http_error fault rules for MCIs, and routes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, token, _ := r.BasicAuth()
	tenant, err := h.tenants.TenantOf(token)
	if err != nil {
		var we *wire.Error
		switch {
		case !errors.As(err, &we):
		case we.Code == wire.CodeUnauthorized:
			w.Header().Set("WWW-Authenticate", `Basic realm="tumblebug"`)
			err = &dialect.Error{Status: http.StatusUnauthorized, Message: "authentication failed: send HTTP Basic auth whose password is your tenant's token (any user name)"}
		case we.Code == wire.CodeForbidden:
			err = &dialect.Error{Status: http.StatusForbidden, Message: "the admin token is for the simulator-wide controls; MCIs belong to tenants: send a tenant's token as the Basic auth password"}
		}
		writeError(w, err)
		return
	}
	if f := h.eng.Faults().Match(r.Context(), wire.FaultHTTPError, tenant, mciKind, "", ""); f != nil {
		writeError(w, dialect.InjectedError(f))
		return
	}
	if _, pattern := h.mux.Handler(r); pattern == "" {
		writeError(w, &dialect.Error{Status: http.StatusNotFound,
			Message: fmt.Sprintf("%s %s is not part of the Tumblebug API the simulator serves (GET /ns/{nsId}/mci, POST /ns/{nsId}/mciDynamic, GET/DELETE /ns/{nsId}/mci/{mciId}, GET /ns/{nsId}/control/mci/{mciId}?action=, POST /ns/{nsId}/mci/{mciId}?action=, and the same for /vm/{vmId})", r.Method, r.URL.Path)})
		return
	}
	r = dialect.WithTenant(r, tenant)
	h.mux.ServeHTTP(w, r)
}

// namespace checks the request's namespace; ok is false when it was answered.
func namespace(w http.ResponseWriter, r *http.Request) bool {
	if ns := r.PathValue("nsId"); ns != Namespace {
		writeError(w, &dialect.Error{Status: http.StatusNotFound,
			Message: fmt.Sprintf("namespace %s does not exist: the simulator serves one namespace, %s, holding your tenant's MCIs", ns, Namespace)})
		return false
	}
	return true
}

func (h *Handler) kind() (*lifecycle.Kind, error) {
	k, err := h.eng.Registry().Kind(mciKind)
	if err != nil {
		return nil, &dialect.Error{Status: http.StatusNotFound, Message: "this simulator serves no mci kind"}
	}
	return k, nil
}

// find reads the tenant's MCI named name (its ID in the namespace), its kind and its VMs.
func (h *Handler) find(ctx context.Context, tenant, name string) (*lifecycle.Kind, *engine.Object, []*engine.Object, error) {
	k, err := h.kind()
	if err != nil {
		return nil, nil, nil, err
	}
	tn := h.names.Of(tenant)
	tn.Lock()
	o, err := tn.Lookup(ctx, h.eng, tenant, k, name, true)
	tn.Unlock()
	switch {
	case err != nil:
		return nil, nil, nil, err
	case o == nil:
		return nil, nil, nil, notFound(name)
	}
	vms, err := h.eng.List(ctx, tenant, engine.ListOptions{ParentID: o.ID, Kind: vmKind})
	return k, o, vms, err
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) {
	if !namespace(w, r) {
		return
	}
	ctx, tenant := r.Context(), dialect.Tenant(r)
	option := r.URL.Query().Get("option")
	switch option {
	case "", "id", "simple", "status":
	default:
		writeError(w, &dialect.Error{Status: http.StatusBadRequest, Message: fmt.Sprintf("option %q is not one of id, simple, status (or none)", option)})
		return
	}
	mcis, err := h.eng.List(ctx, tenant, engine.ListOptions{Kind: mciKind})
	if err != nil {
		writeError(w, err)
		return
	}
	if option == "id" {
		ids := make([]string, 0, len(mcis))
		for _, o := range mcis {
			ids = append(ids, o.Name)
		}
		dialect.JSON(w, http.StatusOK, IDList{Output: ids})
		return
	}
	vms := map[string][]*engine.Object{}
	if option != "simple" {
		all, err := h.eng.List(ctx, tenant, engine.ListOptions{Kind: vmKind})
		if err != nil {
			writeError(w, err)
			return
		}
		for _, v := range all {
			vms[v.ParentID] = append(vms[v.ParentID], v)
		}
	}
	if option == "status" {
		out := make([]MciStatus, 0, len(mcis))
		for _, o := range mcis {
			out = append(out, statusOf(o, vms[o.ID]))
		}
		dialect.JSON(w, http.StatusOK, map[string]any{"mci": out})
		return
	}
	out := make([]MciInfo, 0, len(mcis))
	for _, o := range mcis {
		out = append(out, infoOf(o, vms[o.ID]))
	}
	dialect.JSON(w, http.StatusOK, map[string]any{"mci": out})
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	if !namespace(w, r) {
		return
	}
	_, o, vms, err := h.find(r.Context(), dialect.Tenant(r), r.PathValue("mciId"))
	if err != nil {
		writeError(w, err)
		return
	}
	switch option := r.URL.Query().Get("option"); option {
	case "", "default":
		dialect.JSON(w, http.StatusOK, infoOf(o, vms))
	case "status":
		s := statusOf(o, vms)
		dialect.JSON(w, http.StatusOK, map[string]any{"status": s}) // wrapped, as upstream's RestGetMci
	case "id":
		ids := make([]string, 0, len(vms))
		for _, v := range vms {
			ids = append(ids, vmName(o, v))
		}
		dialect.JSON(w, http.StatusOK, IDList{Output: ids})
	default:
		writeError(w, &dialect.Error{Status: http.StatusBadRequest,
			Message: fmt.Sprintf("option %q is not served: use default, id or status (accessinfo is not modelled: the simulator's VMs have no SSH access)", option)})
	}
}

// DynamicRequest is upstream's model.MciDynamicReq, the fields the simulator models.
type DynamicRequest struct {
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	SubGroups   []SubGroupRequest `json:"subGroups"`
}

// SubGroupRequest is upstream's model.CreateSubGroupDynamicReq, the fields the simulator models.
type SubGroupRequest struct {
	Name         string `json:"name"`
	SubGroupSize int    `json:"subGroupSize"`
	SpecID       string `json:"specId"`
	ImageID      string `json:"imageId"`
}

// spec translates a create request into the mci kind's spec: a subgroup's specId
// "csp+region+spec" gives its csp, region and spec; subGroupSize (default 1) its count.
func (req DynamicRequest) spec() (map[string]any, error) {
	if strings.TrimSpace(req.Name) == "" {
		return nil, &dialect.Error{Status: http.StatusBadRequest, Message: "name is required: the MCI's name is its ID in the namespace"}
	}
	if len(req.SubGroups) == 0 {
		return nil, &dialect.Error{Status: http.StatusBadRequest, Message: "subGroups is required: give at least one subgroup {name, subGroupSize, specId, imageId}"}
	}
	groups := make([]any, 0, len(req.SubGroups))
	for i, sg := range req.SubGroups {
		parts := strings.Split(sg.SpecID, "+")
		if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
			return nil, &dialect.Error{Status: http.StatusBadRequest,
				Message: fmt.Sprintf("subGroups[%d].specId %q is not of the form csp+region+spec (e.g. aws+ap-northeast-2+t3.small)", i, sg.SpecID)}
		}
		name, size := sg.Name, sg.SubGroupSize
		if name == "" {
			name = fmt.Sprintf("g%d", i+1)
		}
		if size == 0 {
			size = 1
		}
		g := map[string]any{"name": name, "count": size, "csp": parts[0], "region": parts[1], "spec": parts[2]}
		if sg.ImageID != "" {
			g["image"] = sg.ImageID
		}
		groups = append(groups, g)
	}
	spec := map[string]any{"subgroups": groups}
	if req.Description != "" {
		spec["description"] = req.Description
	}
	return spec, nil
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) {
	if !namespace(w, r) {
		return
	}
	// option=hold makes the MCI and holds it before provisioning: continue provisions it,
	// withdraw removes it (upstream's request waits meanwhile; the simulator answers at once).
	hold := false
	switch opt := r.URL.Query().Get("option"); opt {
	case "":
	case "hold":
		hold = true
	default:
		writeError(w, &dialect.Error{Status: http.StatusBadRequest, Message: fmt.Sprintf("option %q is not served: create without it, or with option=hold", opt)})
		return
	}
	k, err := h.kind()
	if err != nil {
		writeError(w, err)
		return
	}
	var req DynamicRequest
	if err := requestBody.Decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	spec, err := req.spec()
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, tenant := r.Context(), dialect.Tenant(r)
	o, err := h.createNamed(ctx, tenant, k, wire.CreateRequest{Name: req.Name, Spec: spec, Hold: hold}, r.Header.Get("Idempotency-Key"))
	if err != nil {
		writeError(w, err)
		return
	}
	vms, err := h.eng.List(ctx, tenant, engine.ListOptions{ParentID: o.ID, Kind: vmKind})
	if err != nil {
		writeError(w, err)
		return
	}
	dialect.JSON(w, http.StatusOK, infoOf(o, vms))
}

// createNamed creates the MCI unless the namespace has one of that name (a name is an MCI's
// ID). A retry with the Idempotency-Key of a create that made it gets it.
func (h *Handler) createNamed(ctx context.Context, tenant string, k *lifecycle.Kind, req wire.CreateRequest, key string) (*engine.Object, error) {
	tn := h.names.Of(tenant)
	tn.Lock()
	defer tn.Unlock()
	// A retry answers what its first attempt made, though the name is taken now.
	if o, ok, err := h.eng.Created(ctx, tenant, k, req, key); err != nil || ok {
		return o, err
	}
	taken, err := tn.Lookup(ctx, h.eng, tenant, k, req.Name, false)
	if err != nil {
		return nil, err
	}
	if taken != nil {
		return nil, &dialect.Error{Status: http.StatusConflict, Message: fmt.Sprintf("The mci %s already exists", req.Name)}
	}
	o, err := h.eng.Create(ctx, tenant, k, req, key)
	if err == nil {
		tn.Add(req.Name, o.ID)
	}
	return o, err
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	if !namespace(w, r) {
		return
	}
	ctx, tenant, name := r.Context(), dialect.Tenant(r), r.PathValue("mciId")
	option := r.URL.Query().Get("option")
	if option != "" && option != "terminate" && option != "force" {
		writeError(w, &dialect.Error{Status: http.StatusBadRequest, Message: fmt.Sprintf("option %q is not one of terminate, force (or none)", option)})
		return
	}
	k, o, _, err := h.find(ctx, tenant, name)
	if err != nil {
		writeError(w, err)
		return
	}
	if option == "" && k.IsHeld(o.State) {
		writeError(w, &dialect.Error{Status: http.StatusConflict,
			Message: fmt.Sprintf("MCI %s is held (created with option=hold): withdraw it (GET /ns/%s/control/mci/%s?action=withdraw) or delete with ?option=terminate", name, Namespace, name)})
		return
	}
	if option == "" && o.State != "Terminated" && o.State != "Failed" {
		writeError(w, &dialect.Error{Status: http.StatusConflict,
			Message: fmt.Sprintf("MCI %s is %s: terminate it first (GET /ns/%s/control/mci/%s?action=terminate) or delete with ?option=terminate", name, o.State, Namespace, name)})
		return
	}
	if _, err := h.eng.Delete(ctx, tenant, k, o.ID, ""); err != nil {
		writeError(w, engineError(name, o.ID, err))
		return
	}
	dialect.JSON(w, http.StatusOK, IDList{Output: []string{name}})
}

// control runs an MCI action: upstream's GET …/control/mci/{mciId}?action= and the seed's
// POST …/mci/{mciId}?action=; force=true skips the status checks, as upstream's.
func (h *Handler) control(w http.ResponseWriter, r *http.Request) {
	if !namespace(w, r) {
		return
	}
	ctx, tenant, name := r.Context(), dialect.Tenant(r), r.PathValue("mciId")
	action, force, err := actionOf(r, actions)
	if err != nil {
		writeError(w, err)
		return
	}
	k, o, _, err := h.find(ctx, tenant, name)
	if err != nil {
		writeError(w, err)
		return
	}
	held := action == "continue" || action == "withdraw"
	if held && !k.IsHeld(o.State) && o.Op == nil {
		writeError(w, &dialect.Error{Status: http.StatusConflict,
			Message: fmt.Sprintf("MCI %s is not held (it is %s): %s acts on an MCI created with option=hold (POST /ns/%s/mciDynamic?option=hold) that is still waiting", name, o.State, action, Namespace)})
		return
	}
	if _, err := h.eng.Act(ctx, tenant, k, o.ID, action, wire.ActionRequest{Force: force}, r.Header.Get("Idempotency-Key")); err != nil {
		writeError(w, engineError(name, o.ID, err))
		return
	}
	msg := fmt.Sprintf("%s MCI %s (the action runs; poll GET /ns/%s/mci/%s?option=status)", action, name, Namespace, name)
	switch action {
	case "continue": // upstream's answers, with what follows
		msg = fmt.Sprintf("Continue the holding MCI %s (its VMs are provisioned now; poll GET /ns/%s/mci/%s?option=status)", name, Namespace, name)
	case "withdraw":
		msg = fmt.Sprintf("Withdraw the holding MCI %s (it is deleted)", name)
	}
	dialect.JSON(w, http.StatusOK, SimpleMsg{Message: msg})
}

// actionOf reads a control request's action (one of allowed) and force flag.
func actionOf(r *http.Request, allowed []string) (action string, force bool, err error) {
	q := r.URL.Query()
	action = q.Get("action")
	if !slices.Contains(allowed, action) {
		return "", false, &dialect.Error{Status: http.StatusBadRequest, Message: "'action' should be one of these: " + strings.Join(allowed, ", ")}
	}
	switch f := q.Get("force"); f {
	case "", "false":
	case "true":
		force = true
	default:
		return "", false, &dialect.Error{Status: http.StatusBadRequest, Message: fmt.Sprintf("force %q is not true or false", f)}
	}
	return action, force, nil
}

// vm reads the VM vmId of the tenant's MCI mciId: its ID is its name within the MCI
// (subgroup-n, as upstream names VMs).
func (h *Handler) vm(ctx context.Context, tenant, mciID, vmID string) (*engine.Object, error) {
	_, o, vms, err := h.find(ctx, tenant, mciID)
	if err != nil {
		return nil, err
	}
	for _, v := range vms {
		if vmName(o, v) == vmID {
			return v, nil
		}
	}
	return nil, &dialect.Error{Status: http.StatusNotFound, Message: fmt.Sprintf("The vm %s does not exist in MCI %s", vmID, mciID)}
}

func (h *Handler) getVM(w http.ResponseWriter, r *http.Request) {
	if !namespace(w, r) {
		return
	}
	mciID := r.PathValue("mciId")
	v, err := h.vm(r.Context(), dialect.Tenant(r), mciID, r.PathValue("vmId"))
	if err != nil {
		writeError(w, err)
		return
	}
	vm := vmOf(mciID, v)
	switch option := r.URL.Query().Get("option"); option {
	case "", "default":
		dialect.JSON(w, http.StatusOK, vm)
	case "status":
		dialect.JSON(w, http.StatusOK, vm.status()) // not wrapped, as upstream's RestGetMciVm
	default:
		writeError(w, &dialect.Error{Status: http.StatusBadRequest, Message: fmt.Sprintf("option %q is not served: use default or status", option)})
	}
}

// controlVM runs a VM action: upstream's GET …/control/mci/{mciId}/vm/{vmId}?action= and
// the seed's POST …/mci/{mciId}/vm/{vmId}?action=.
func (h *Handler) controlVM(w http.ResponseWriter, r *http.Request) {
	if !namespace(w, r) {
		return
	}
	ctx, tenant, mciID, vmID := r.Context(), dialect.Tenant(r), r.PathValue("mciId"), r.PathValue("vmId")
	action, force, err := actionOf(r, vmActions)
	if err != nil {
		writeError(w, err)
		return
	}
	k, err := h.eng.Registry().Kind(vmKind)
	if err != nil {
		writeError(w, &dialect.Error{Status: http.StatusNotFound, Message: "this simulator serves no vm kind"})
		return
	}
	v, err := h.vm(ctx, tenant, mciID, vmID)
	if err != nil {
		writeError(w, err)
		return
	}
	if _, err := h.eng.Act(ctx, tenant, k, v.ID, action, wire.ActionRequest{Force: force}, r.Header.Get("Idempotency-Key")); err != nil {
		we := engine.AsError(err)
		if we.Code != wire.CodeNotFound {
			named := *we
			named.Message = strings.ReplaceAll(strings.ReplaceAll(we.Message, "vm "+v.ID, "VM "+vmID), v.ID, vmID)
			err = &named
		} else {
			err = &dialect.Error{Status: http.StatusNotFound, Message: fmt.Sprintf("The vm %s does not exist in MCI %s", vmID, mciID)}
		}
		writeError(w, err)
		return
	}
	dialect.JSON(w, http.StatusOK, SimpleMsg{Message: fmt.Sprintf("%s VM %s of MCI %s (the action runs; poll GET /ns/%s/mci/%s/vm/%s?option=status)", action, vmID, mciID, Namespace, mciID, vmID)})
}
