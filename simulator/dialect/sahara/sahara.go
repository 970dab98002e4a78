// Package sahara serves OpenStack Sahara's data-processing API, v2 (/v2) and v1.1
// (/v1.1/{project}), over the simulator's engine, so the real `openstack dataprocessing`
// commands drive the simulator's Savanna cluster kind: node group templates and cluster
// templates (list, create, show, delete), and clusters made from them (list, create, show,
// scale, delete). Clusters are the engine's cluster objects — the same objects, with the
// same history, as through /v1 and the dashboard — answered as Sahara answers them
// ({"cluster": …}, UUID IDs, v1.1's hadoop_version and tenant_id or v2's plugin_version and
// project_id, the last error in status_description) and errors as {"error_code",
// "error_message", "error_name"}.
//
// Templates are objects of the Savanna family's node_group_template and cluster_template
// kinds, stored as every object is (they survive restarts, replicas share them, /v1 and the
// dashboard show them). A cluster's spec records the templates it was made from
// (cluster_template_id, each node group's node_group_template_id) with its image and
// description; the cluster kind's link refuses to delete a cluster template a cluster names,
// and the dialect refuses, as Sahara does, to delete a node group template in use.
package sahara

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect/names"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// clusterKind is the built-in kind the dialect serves clusters as.
const clusterKind = "cluster"

// maxBody bounds a request body (a cluster with twenty node groups is a few KiB).
const maxBody = 1 << 20

// requestBody reads a request body as Sahara does.
var requestBody = dialect.Body{Limit: maxBody, TooLarge: "REQUEST_ENTITY_TOO_LARGE", Malformed: "MALFORMED_REQUEST_BODY"}

// apiVersion is the Sahara API version a request came in by.
type apiVersion int

const (
	v11 apiVersion = iota
	v2
)

// Handler serves Sahara's v2 and v1.1 APIs under the prefix it is mounted at (/sahara).
type Handler struct {
	eng     *engine.Engine
	tenants dialect.Tenants
	mux     *http.ServeMux
	prefix  string
	// names serialises a tenant's check for a free template name with the create that takes
	// it, per template kind.
	names map[string]*names.Index
}

// New returns the Sahara dialect over eng, mounted at prefix (/sahara: version discovery
// answers links under it); tenants resolves the callers' X-Auth-Token.
func New(eng *engine.Engine, tenants dialect.Tenants, prefix string) *Handler {
	h := &Handler{eng: eng, tenants: tenants, mux: http.NewServeMux(), prefix: strings.TrimSuffix(prefix, "/"),
		names: map[string]*names.Index{ngtKind: {}, ctKind: {}}}
	h.mux.HandleFunc("GET /{$}", h.versions)
	// Every other path: not served. The mux routes a request once (a check before routing
	// would route it twice).
	h.mux.HandleFunc("/", notServed)
	for _, p := range []struct {
		prefix string
		v      apiVersion
	}{{"/v2", v2}, {"/v1.1", v11}} {
		route := func(pattern string, f func(http.ResponseWriter, *http.Request, apiVersion)) {
			method, path, _ := strings.Cut(pattern, " ")
			h.mux.HandleFunc(method+" "+p.prefix+path, func(w http.ResponseWriter, r *http.Request) { f(w, r, p.v) })
		}
		route("GET /node-group-templates", h.listNGTs)
		route("POST /node-group-templates", h.createNGT)
		route("GET /node-group-templates/{id}", h.getNGT)
		route("DELETE /node-group-templates/{id}", h.deleteNGT)
		route("GET /cluster-templates", h.listCTs)
		route("POST /cluster-templates", h.createCT)
		route("GET /cluster-templates/{id}", h.getCT)
		route("DELETE /cluster-templates/{id}", h.deleteCT)
		route("GET /clusters", h.listClusters)
		route("POST /clusters", h.createCluster)
		route("GET /clusters/{id}", h.getCluster)
		route("PUT /clusters/{id}", h.scaleCluster)
		route("DELETE /clusters/{id}", h.deleteCluster)
	}
	return h
}

// ServeHTTP implements http.Handler: it resolves the caller's tenant (and, for v1.1, checks
// the path names the caller's project), applies the tenant's http_error fault rules for
// clusters, and routes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "" || r.URL.Path == "/" { // version discovery needs no token
		h.versions(w, r)
		return
	}
	tenant, err := h.tenants.TenantOf(r.Header.Get("X-Auth-Token"))
	if err != nil {
		writeError(w, err)
		return
	}
	if f := h.eng.Faults().Match(r.Context(), wire.FaultHTTPError, tenant, clusterKind, "", ""); f != nil {
		writeError(w, dialect.InjectedError(f))
		return
	}
	// v1.1's paths name the project (/v1.1/{project}/clusters); v2's may (the clients add it
	// when the catalog's URL has it). It must be the caller's.
	if ver, rest, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/"); ok && (ver == "v1.1" || ver == "v2") {
		p, tail, _ := strings.Cut(rest, "/")
		next, _, _ := strings.Cut(tail, "/")
		switch {
		case ver == "v2" && (collections[p] || !collections[next]): // no project named
		case p == project(tenant):
			r.URL.Path, r.URL.RawPath = "/"+ver+"/"+tail, ""
		default:
			writeError(w, &dialect.Error{Status: http.StatusForbidden, Name: "FORBIDDEN",
				Message: fmt.Sprintf("the path names project %q but the token is project %q's: use /%s/%s", p, project(tenant), ver, project(tenant))})
			return
		}
	}
	h.mux.ServeHTTP(w, dialect.WithTenant(r, tenant))
}

// notServed answers a route the dialect does not serve.
func notServed(w http.ResponseWriter, r *http.Request) {
	writeError(w, &dialect.Error{Status: http.StatusNotFound, Name: "NOT_FOUND",
		Message: fmt.Sprintf("%s %s is not part of the Sahara API the simulator serves (node-group-templates, cluster-templates and clusters under /v2 and /v1.1/{project})", r.Method, r.URL.Path)})
}

// collections are the collections the dialect serves (a v2 path's first segment when it
// names no project).
var collections = map[string]bool{"node-group-templates": true, "cluster-templates": true, "clusters": true}

// versions answers Sahara's version discovery: v1.1 (supported) and v2 (current).
func (h *Handler) versions(w http.ResponseWriter, r *http.Request) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	base := scheme + "://" + r.Host + h.prefix
	dialect.JSON(w, http.StatusOK, map[string]any{"versions": []map[string]any{
		{"id": "v1.1", "status": "SUPPORTED", "links": []map[string]string{{"rel": "self", "href": base + "/v1.1/"}}},
		{"id": "v2", "status": "CURRENT", "links": []map[string]string{{"rel": "self", "href": base + "/v2/"}}},
	}})
}

// ---- node group templates ----------------------------------------------------------------

// ngtRequest is what `openstack dataprocessing node group template create` sends (v1.1 names
// the version hadoop_version, v2 plugin_version).
type ngtRequest struct {
	templateFields
	FlavorID      string   `json:"flavor_id"`
	NodeProcesses []string `json:"node_processes"`
}

// templateFields are what both template creates send: a name, the plugin and its version
// (v1.1's hadoop_version, v2's plugin_version) and a description.
type templateFields struct {
	Name          string `json:"name"`
	PluginName    string `json:"plugin_name"`
	HadoopVersion string `json:"hadoop_version"`
	PluginVersion string `json:"plugin_version"`
	Description   string `json:"description"`
}

func (t *templateFields) fields() *templateFields { return t }

// decodeTemplate reads a template create into req and checks its plugin: the template's
// kind and the plugin's version, or false once an error is answered.
func (h *Handler) decodeTemplate(w http.ResponseWriter, r *http.Request, v apiVersion, kind string, req interface{ fields() *templateFields }) (*lifecycle.Kind, string, bool) {
	k, err := h.kind(kind)
	if err != nil {
		writeError(w, err)
		return nil, "", false
	}
	if err := requestBody.Decode(w, r, req); err != nil {
		writeError(w, err)
		return nil, "", false
	}
	f := req.fields()
	version := pick(v, f.HadoopVersion, f.PluginVersion)
	if err := h.checkPlugin(f.Name, f.PluginName, version, v); err != nil {
		writeError(w, err)
		return nil, "", false
	}
	return k, version, true
}

// spec is the template spec's common part: the plugin, its version and the description.
func (t *templateFields) spec(version string) map[string]any {
	spec := map[string]any{"plugin_name": t.PluginName, "hadoop_version": version}
	if t.Description != "" {
		spec["description"] = t.Description
	}
	return spec
}

func (h *Handler) createNGT(w http.ResponseWriter, r *http.Request, v apiVersion) {
	var req ngtRequest
	k, version, ok := h.decodeTemplate(w, r, v, ngtKind, &req)
	if !ok {
		return
	}
	if req.FlavorID == "" {
		writeError(w, missing("flavor_id"))
		return
	}
	if len(req.NodeProcesses) == 0 {
		writeError(w, missing("node_processes"))
		return
	}
	spec := req.spec(version)
	spec["flavor"], spec["processes"] = req.FlavorID, anys(req.NodeProcesses)
	o, err := h.createNamed(r.Context(), dialect.Tenant(r), k, "Node group template", wire.CreateRequest{Name: req.Name, Spec: spec}, r.Header.Get("Idempotency-Key"))
	if err != nil {
		writeError(w, err)
		return
	}
	dialect.JSON(w, http.StatusAccepted, map[string]any{"node_group_template": ngtAnswer(v, o)})
}

func (h *Handler) listNGTs(w http.ResponseWriter, r *http.Request, v apiVersion) {
	objs, err := h.eng.List(r.Context(), dialect.Tenant(r), engine.ListOptions{Kind: ngtKind})
	if err != nil {
		writeError(w, err)
		return
	}
	out := make([]answer, 0, len(objs))
	for _, o := range objs {
		out = append(out, ngtAnswer(v, o))
	}
	dialect.JSON(w, http.StatusOK, map[string]any{"node_group_templates": out, "markers": map[string]any{"prev": nil, "next": nil}})
}

func (h *Handler) getNGT(w http.ResponseWriter, r *http.Request, v apiVersion) {
	_, o, err := h.readAs(r.Context(), dialect.Tenant(r), ngtKind, "NodeGroupTemplate", r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	dialect.JSON(w, http.StatusOK, map[string]any{"node_group_template": ngtAnswer(v, o)})
}

// deleteNGT deletes a node group template unless a cluster template or a cluster has a node
// group made from it (as Sahara refuses it).
func (h *Handler) deleteNGT(w http.ResponseWriter, r *http.Request, v apiVersion) {
	ctx, tenant, uuid := r.Context(), dialect.Tenant(r), r.PathValue("id")
	k, o, err := h.readAs(ctx, tenant, ngtKind, "NodeGroupTemplate", uuid)
	if err != nil {
		writeError(w, err)
		return
	}
	templates, clusters, err := h.ngtUsers(ctx, tenant, o.ID)
	if err != nil {
		writeError(w, err)
		return
	}
	if len(templates)+len(clusters) > 0 {
		writeError(w, inUse("Node group template %s is in use by cluster templates: %s; and clusters: %s (delete them first)", uuid, orNA(templates), orNA(clusters)))
		return
	}
	if _, err := h.eng.Delete(ctx, tenant, k, o.ID, ""); err != nil {
		writeError(w, notFoundAs("NodeGroupTemplate", uuid, err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// ---- cluster templates -------------------------------------------------------------------

// nodeGroupRef is a node group of a cluster template or a cluster request: a name, a count
// and the node group template it is made from.
type nodeGroupRef struct {
	Name       string `json:"name"`
	Count      int64  `json:"count"`
	TemplateID string `json:"node_group_template_id"`
}

// ctRequest is what `openstack dataprocessing cluster template create` sends.
type ctRequest struct {
	templateFields
	NodeGroups     []nodeGroupRef `json:"node_groups"`
	DefaultImageID string         `json:"default_image_id"`
}

func (h *Handler) createCT(w http.ResponseWriter, r *http.Request, v apiVersion) {
	var req ctRequest
	k, version, ok := h.decodeTemplate(w, r, v, ctKind, &req)
	if !ok {
		return
	}
	ctx, tenant := r.Context(), dialect.Tenant(r)
	refs, err := refsOf(req.NodeGroups)
	if err != nil {
		writeError(w, err)
		return
	}
	if _, err := h.nodeGroups(ctx, tenant, refs); err != nil {
		writeError(w, err)
		return
	}
	groups := make([]any, 0, len(refs))
	for _, g := range refs {
		groups = append(groups, map[string]any{"name": g.name, "count": g.count, "node_group_template_id": g.template})
	}
	spec := req.spec(version)
	spec["node_groups"] = groups
	if req.DefaultImageID != "" {
		spec["default_image_id"] = req.DefaultImageID
	}
	o, err := h.createNamed(ctx, tenant, k, "Cluster template", wire.CreateRequest{Name: req.Name, Spec: spec}, r.Header.Get("Idempotency-Key"))
	if err != nil {
		writeError(w, err)
		return
	}
	dialect.JSON(w, http.StatusAccepted, map[string]any{"cluster_template": h.ctAnswer(ctx, v, o)})
}

func (h *Handler) listCTs(w http.ResponseWriter, r *http.Request, v apiVersion) {
	ctx := r.Context()
	objs, err := h.eng.List(ctx, dialect.Tenant(r), engine.ListOptions{Kind: ctKind})
	if err != nil {
		writeError(w, err)
		return
	}
	out := make([]answer, 0, len(objs))
	for _, o := range objs {
		out = append(out, h.ctAnswer(ctx, v, o))
	}
	dialect.JSON(w, http.StatusOK, map[string]any{"cluster_templates": out, "markers": map[string]any{"prev": nil, "next": nil}})
}

func (h *Handler) getCT(w http.ResponseWriter, r *http.Request, v apiVersion) {
	_, o, err := h.readAs(r.Context(), dialect.Tenant(r), ctKind, "ClusterTemplate", r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	dialect.JSON(w, http.StatusOK, map[string]any{"cluster_template": h.ctAnswer(r.Context(), v, o)})
}

// deleteCT deletes a cluster template unless a cluster was made from it: the cluster kind's
// link refuses it (through /v1 too); the dialect answers Sahara's refusal, naming them.
func (h *Handler) deleteCT(w http.ResponseWriter, r *http.Request, v apiVersion) {
	ctx, tenant, uuid := r.Context(), dialect.Tenant(r), r.PathValue("id")
	k, o, err := h.readAs(ctx, tenant, ctKind, "ClusterTemplate", uuid)
	if err != nil {
		writeError(w, err)
		return
	}
	if _, err := h.eng.Delete(ctx, tenant, k, o.ID, ""); err != nil {
		if engine.AsError(err).Code == wire.CodeInvalidTransition {
			if users, lerr := h.ctUsers(ctx, tenant, o.ID); lerr == nil && len(users) > 0 {
				err = inUse("Cluster template %s in use by %s (delete them first)", uuid, strings.Join(users, ", "))
			}
		}
		writeError(w, notFoundAs("ClusterTemplate", uuid, err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// ---- clusters ----------------------------------------------------------------------------

// clusterRequest is what `openstack dataprocessing cluster create` sends.
type clusterRequest struct {
	Name              string         `json:"name"`
	PluginName        string         `json:"plugin_name"`
	HadoopVersion     string         `json:"hadoop_version"`
	PluginVersion     string         `json:"plugin_version"`
	ClusterTemplateID string         `json:"cluster_template_id"`
	DefaultImageID    string         `json:"default_image_id"`
	Description       string         `json:"description"`
	NodeGroups        []nodeGroupRef `json:"node_groups"`
	Count             int            `json:"count"`
}

func (h *Handler) cluster() (*lifecycle.Kind, error) { return h.kind(clusterKind) }

func (h *Handler) createCluster(w http.ResponseWriter, r *http.Request, v apiVersion) {
	k, err := h.cluster()
	if err != nil {
		writeError(w, err)
		return
	}
	var req clusterRequest
	if err := requestBody.Decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Count > 1 {
		writeError(w, &dialect.Error{Status: http.StatusBadRequest, Name: "INVALID_DATA",
			Message: "creating several clusters at once (count) is not modelled: create them one by one"})
		return
	}
	ctx, tenant := r.Context(), dialect.Tenant(r)
	version := pick(v, req.HadoopVersion, req.PluginVersion)
	if err := h.checkPlugin(req.Name, req.PluginName, version, v); err != nil {
		writeError(w, err)
		return
	}
	refs, err := refsOf(req.NodeGroups)
	if err != nil {
		writeError(w, err)
		return
	}
	spec := map[string]any{"plugin_name": req.PluginName, "hadoop_version": version}
	image := req.DefaultImageID
	if req.ClusterTemplateID != "" {
		_, ct, err := h.readAs(ctx, tenant, ctKind, "ClusterTemplate", req.ClusterTemplateID)
		if err != nil {
			if engine.AsError(err).Code == wire.CodeNotFound || isNotFound(err) {
				err = &dialect.Error{Status: http.StatusBadRequest, Name: "INVALID_REFERENCE",
					Message: fmt.Sprintf("Cluster template with id '%s' not found", req.ClusterTemplateID)}
			}
			writeError(w, err)
			return
		}
		if ct.Spec["plugin_name"] != req.PluginName || ct.Spec["hadoop_version"] != version {
			writeError(w, &dialect.Error{Status: http.StatusBadRequest, Name: "INVALID_DATA",
				Message: fmt.Sprintf("the cluster's plugin %s %s differs from its template's %v %v", req.PluginName, version, ct.Spec["plugin_name"], ct.Spec["hadoop_version"])})
			return
		}
		spec["cluster_template_id"] = ct.ID
		if len(refs) == 0 {
			refs = specRefs(ct.Spec)
		}
		if image == "" {
			image, _ = ct.Spec["default_image_id"].(string)
		}
	}
	groups, err := h.nodeGroups(ctx, tenant, refs)
	if err != nil {
		writeError(w, err)
		return
	}
	spec["node_groups"] = groups
	if image != "" {
		spec["default_image_id"] = image
	}
	if req.Description != "" {
		spec["description"] = req.Description
	}
	o, err := h.eng.Create(ctx, tenant, k, wire.CreateRequest{Name: req.Name, Spec: spec}, r.Header.Get("Idempotency-Key"))
	if err != nil {
		writeError(w, err)
		return
	}
	dialect.JSON(w, http.StatusAccepted, map[string]any{"cluster": h.clusterAnswer(v, o)})
}

// anys is a list of strings as a spec holds it.
func anys(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

func (h *Handler) listClusters(w http.ResponseWriter, r *http.Request, v apiVersion) {
	objs, err := h.eng.List(r.Context(), dialect.Tenant(r), engine.ListOptions{Kind: clusterKind})
	if err != nil {
		writeError(w, err)
		return
	}
	q := r.URL.Query()
	out := []Cluster{}
	for _, o := range objs {
		a := h.clusterAnswer(v, o)
		if p := q.Get("plugin_name"); p != "" && a.PluginName != p {
			continue
		}
		if hv := q.Get("hadoop_version") + q.Get("plugin_version"); hv != "" && o.Spec["hadoop_version"] != hv {
			continue
		}
		out = append(out, a)
	}
	dialect.JSON(w, http.StatusOK, map[string]any{"clusters": out, "markers": map[string]any{"prev": nil, "next": nil}})
}

// read reads a cluster by its UUID.
func (h *Handler) read(ctx context.Context, tenant, uuid string) (*lifecycle.Kind, *engine.Object, error) {
	k, err := h.cluster()
	if err != nil {
		return nil, nil, err
	}
	id, ok := dialect.IDOf(clusterKind, uuid)
	if !ok {
		return nil, nil, notFound("Cluster", uuid)
	}
	o, err := h.eng.Get(ctx, tenant, k, id)
	if err != nil {
		return nil, nil, notFoundOr(uuid, err)
	}
	return k, o, nil
}

func (h *Handler) getCluster(w http.ResponseWriter, r *http.Request, v apiVersion) {
	_, o, err := h.read(r.Context(), dialect.Tenant(r), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	dialect.JSON(w, http.StatusOK, map[string]any{"cluster": h.clusterAnswer(v, o)})
}

// scaleRequest is what `openstack dataprocessing cluster scale` sends: groups resized by
// name, groups added from a template.
type scaleRequest struct {
	ResizeNodeGroups []nodeGroupRef `json:"resize_node_groups"`
	AddNodeGroups    []nodeGroupRef `json:"add_node_groups"`
}

func (h *Handler) scaleCluster(w http.ResponseWriter, r *http.Request, v apiVersion) {
	ctx, tenant, uuid := r.Context(), dialect.Tenant(r), r.PathValue("id")
	var req scaleRequest
	if err := requestBody.Decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if len(req.ResizeNodeGroups)+len(req.AddNodeGroups) == 0 {
		writeError(w, &dialect.Error{Status: http.StatusBadRequest, Name: "INVALID_DATA",
			Message: "a scale names resize_node_groups or add_node_groups (openstack dataprocessing cluster scale --instances TEMPLATE:COUNT)"})
		return
	}
	k, o, err := h.read(ctx, tenant, uuid)
	if err != nil {
		writeError(w, err)
		return
	}
	list, _ := o.Spec["node_groups"].([]any)
	groups := make([]any, 0, len(list)+len(req.AddNodeGroups))
	byName := map[string]map[string]any{}
	for _, item := range list {
		g, _ := item.(map[string]any)
		c := make(map[string]any, len(g))
		for key, val := range g {
			c[key] = val
		}
		name, _ := c["name"].(string)
		byName[name] = c
		groups = append(groups, c)
	}
	for _, rg := range req.ResizeNodeGroups {
		g, ok := byName[rg.Name]
		if !ok {
			writeError(w, &dialect.Error{Status: http.StatusBadRequest, Name: "INVALID_REFERENCE",
				Message: fmt.Sprintf("Cluster doesn't contain node group with name '%s'", rg.Name)})
			return
		}
		g["count"] = rg.Count
	}
	var added []any
	if len(req.AddNodeGroups) > 0 {
		refs, err := refsOf(req.AddNodeGroups)
		if err == nil {
			added, err = h.nodeGroups(ctx, tenant, refs)
		}
		if err != nil {
			writeError(w, err)
			return
		}
	}
	for i, g := range added {
		name := req.AddNodeGroups[i].Name
		if _, ok := byName[name]; ok {
			writeError(w, &dialect.Error{Status: http.StatusBadRequest, Name: "INVALID_DATA",
				Message: fmt.Sprintf("Can't add new nodegroup. Cluster already has nodegroup with name '%s'", name)})
			return
		}
		groups = append(groups, g)
	}
	if o.State != "Active" {
		writeError(w, &dialect.Error{Status: http.StatusConflict, Name: "CLUSTER_ACTION_ERROR",
			Message: fmt.Sprintf("Cluster cannot be scaled not in 'Active' status. Cluster status: %s", o.State)})
		return
	}
	o, err = h.eng.Patch(ctx, tenant, k, o.ID, o.Version, map[string]any{"node_groups": groups})
	if err != nil {
		writeError(w, notFoundOr(uuid, err))
		return
	}
	dialect.JSON(w, http.StatusAccepted, map[string]any{"cluster": h.clusterAnswer(v, o)})
}

func (h *Handler) deleteCluster(w http.ResponseWriter, r *http.Request, v apiVersion) {
	k, err := h.cluster()
	if err != nil {
		writeError(w, err)
		return
	}
	uuid := r.PathValue("id")
	id, ok := dialect.IDOf(clusterKind, uuid)
	if !ok {
		writeError(w, notFound("Cluster", uuid))
		return
	}
	if _, err := h.eng.Delete(r.Context(), dialect.Tenant(r), k, id, ""); err != nil {
		writeError(w, notFoundOr(uuid, err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// ---- requests ----------------------------------------------------------------------------

// checkPlugin checks a create names an object and a plugin with its version (the cluster
// kind's plugins; versions are not checked against a plugin's list).
func (h *Handler) checkPlugin(name, plugin, version string, v apiVersion) error {
	switch {
	case strings.TrimSpace(name) == "":
		return missing("name")
	case plugin == "":
		return missing("plugin_name")
	case version == "":
		return missing(map[apiVersion]string{v11: "hadoop_version", v2: "plugin_version"}[v])
	}
	k, err := h.cluster()
	if err != nil {
		return err
	}
	if f, ok := k.Field("plugin_name"); ok && len(f.Enum) > 0 {
		for _, e := range f.Enum {
			if fmt.Sprint(e) == plugin {
				return nil
			}
		}
		return &dialect.Error{Status: http.StatusBadRequest, Name: "INVALID_REFERENCE",
			Message: fmt.Sprintf("Sahara doesn't contain plugin with name '%s' (the simulator's plugins: %v)", plugin, f.Enum)}
	}
	return nil
}

// pick is the plugin version as the API version names it.
func pick(v apiVersion, hadoop, plugin string) string {
	if v == v2 {
		return plugin
	}
	return hadoop
}

func missing(field string) error {
	return &dialect.Error{Status: http.StatusBadRequest, Name: "VALIDATION_ERROR", Message: fmt.Sprintf("'%s' is a required property", field)}
}
