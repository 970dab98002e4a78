package sahara

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// The Savanna family's template kinds the dialect serves Sahara's templates as. Their specs
// hold engine IDs (a cluster template's node groups name node group templates, a cluster its
// cluster template); the dialect answers them as UUIDs.
const (
	ngtKind = "node_group_template"
	ctKind  = "cluster_template"
)

// kind is the built-in kind name as the engine serves it; Sahara's 404 when it serves none
// (a simulator started with kinds of its own only).
func (h *Handler) kind(name string) (*lifecycle.Kind, error) {
	k, err := h.eng.Registry().Kind(name)
	if err != nil {
		return nil, &dialect.Error{Status: http.StatusNotFound, Name: "NOT_FOUND", Message: fmt.Sprintf("this simulator serves no %s kind", name)}
	}
	return k, nil
}

// readAs reads the tenant's object of kind name by its UUID; Sahara's 404 (naming what, as
// Sahara names it) when there is none.
func (h *Handler) readAs(ctx context.Context, tenant, name, what, uuid string) (*lifecycle.Kind, *engine.Object, error) {
	k, err := h.kind(name)
	if err != nil {
		return nil, nil, err
	}
	id, ok := dialect.IDOf(name, uuid)
	if !ok {
		return nil, nil, notFound(what, uuid)
	}
	o, err := h.eng.Get(ctx, tenant, k, id)
	if err != nil {
		if engine.AsError(err).Code == wire.CodeNotFound {
			return nil, nil, notFound(what, uuid)
		}
		return nil, nil, err
	}
	return k, o, nil
}

// createNamed creates the tenant's object of kind k unless one of that name exists (Sahara's
// template names are unique per project). A retry with the Idempotency-Key of a create that
// made it gets it.
func (h *Handler) createNamed(ctx context.Context, tenant string, k *lifecycle.Kind, what string, req wire.CreateRequest, key string) (*engine.Object, error) {
	tn := h.names[k.Name].Of(tenant)
	tn.Lock()
	defer tn.Unlock()
	if o, ok, err := h.eng.Created(ctx, tenant, k, req, key); err != nil || ok {
		return o, err
	}
	taken, err := tn.Lookup(ctx, h.eng, tenant, k, req.Name, true)
	if err != nil {
		return nil, err
	}
	if taken != nil {
		return nil, &dialect.Error{Status: http.StatusConflict, Name: "NAME_ALREADY_EXISTS",
			Message: fmt.Sprintf("%s with name '%s' already exists", what, req.Name)}
	}
	o, err := h.eng.Create(ctx, tenant, k, req, key)
	if err == nil {
		tn.Add(req.Name, o.ID)
	}
	return o, err
}

// groupRef is a node group as a spec keeps it: a name, a count and the engine ID of the node
// group template it is made from.
type groupRef struct {
	name     string
	count    int64
	template string
}

// refsOf maps a request's node groups (their templates by UUID) to groupRefs; a UUID that
// names no node group template is Sahara's INVALID_REFERENCE.
func refsOf(groups []nodeGroupRef) ([]groupRef, error) {
	out := make([]groupRef, 0, len(groups))
	for i, g := range groups {
		id, ok := dialect.IDOf(ngtKind, g.TemplateID)
		if !ok {
			return nil, unknownNGT(i, g.TemplateID)
		}
		out = append(out, groupRef{name: g.Name, count: g.Count, template: id})
	}
	return out, nil
}

func unknownNGT(i int, uuid string) error {
	return &dialect.Error{Status: http.StatusBadRequest, Name: "INVALID_REFERENCE",
		Message: fmt.Sprintf("node_groups[%d]: node group template with id '%s' not found", i, uuid)}
}

// specRefs reads the node groups of a cluster template's spec.
func specRefs(spec map[string]any) []groupRef {
	list, _ := spec["node_groups"].([]any)
	out := make([]groupRef, 0, len(list))
	for _, item := range list {
		g, _ := item.(map[string]any)
		r := groupRef{count: integer(g["count"])}
		r.name, _ = g["name"].(string)
		r.template, _ = g["node_group_template_id"].(string)
		out = append(out, r)
	}
	return out
}

// nodeGroups resolves node group references to the cluster kind's node groups: each
// template's flavor and processes with the reference's name and count, and the template's ID.
func (h *Handler) nodeGroups(ctx context.Context, tenant string, refs []groupRef) ([]any, error) {
	if len(refs) == 0 {
		return nil, missing("node_groups")
	}
	k, err := h.kind(ngtKind)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(refs))
	for i, g := range refs {
		t, err := h.eng.Get(ctx, tenant, k, g.template)
		if err != nil {
			if engine.AsError(err).Code == wire.CodeNotFound {
				return nil, unknownNGT(i, uuidOf(g.template))
			}
			return nil, err
		}
		out = append(out, map[string]any{"name": g.name, "flavor": t.Spec["flavor"], "count": g.count,
			"processes": t.Spec["processes"], "node_group_template_id": g.template})
	}
	return out, nil
}

// ngtUsers are the names of the tenant's cluster templates and clusters with a node group
// made from the node group template id, as Sahara lists them when it refuses its deletion.
func (h *Handler) ngtUsers(ctx context.Context, tenant, id string) (templates, clusters []string, _ error) {
	for _, kind := range []string{ctKind, clusterKind} {
		objs, err := h.eng.List(ctx, tenant, engine.ListOptions{Kind: kind})
		if err != nil {
			return nil, nil, err
		}
		for _, o := range objs {
			for _, g := range specRefs(o.Spec) {
				if g.template == id {
					if kind == ctKind {
						templates = append(templates, o.Name)
					} else {
						clusters = append(clusters, o.Name)
					}
					break
				}
			}
		}
	}
	return templates, clusters, nil
}

// ctUsers are the names of the tenant's clusters made from the cluster template id (the
// cluster kind's link refuses its deletion while there are any).
func (h *Handler) ctUsers(ctx context.Context, tenant, id string) ([]string, error) {
	objs, err := h.eng.List(ctx, tenant, engine.ListOptions{Kind: clusterKind, Link: [2]string{"cluster_template_id", id}})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(objs))
	for _, o := range objs {
		names = append(names, o.Name)
	}
	return names, nil
}

// inUse is Sahara's refusal to delete a template in use (InvalidReferenceException).
func inUse(format string, args ...any) error {
	return &dialect.Error{Status: http.StatusBadRequest, Name: "INVALID_REFERENCE", Message: fmt.Sprintf(format, args...)}
}

// orNA is a list of names as Sahara writes it in a refusal ("N/A" for none).
func orNA(names []string) string {
	if len(names) == 0 {
		return "N/A"
	}
	return strings.Join(names, ", ")
}
