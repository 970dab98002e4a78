package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// kindConfig is a typed resource (or data source) of a kind, derived from the kind's spec by
// deriveConfig with its family file's additions, or lifecycle_object's (objectKind). The CRUD is
// shared (kindResource); what sets the two apart is their resourceShape.
type kindConfig struct {
	// typeName is the resource type suffix: lifecycle_<typeName>.
	typeName string
	// kind is the lifecycle kind of a typed resource; lifecycle_object's kind is an attribute.
	kind string
	// shape is what the resource type holds of its kind and spec: a typed resource's fields,
	// or lifecycle_object's kind and spec attributes.
	shape resourceShape
	// declared is the kind's declaration the resource was derived from (the built-in spec, or
	// the user's kinds file): what the resource knows of its kind before it is configured.
	declared    *lifecycle.Kind
	description string
	// parentAttr names the attribute holding the parent's ID (cloudspace_id); parentKind is
	// what it must point at (for descriptions).
	parentAttr, parentKind string
	// statuses are the static states users may ask for; nil means no status attribute.
	statuses []string
	// fields are the kind's declared spec fields; a list whose spec names its items shows as
	// blocks of that name (a spec's `subgroups` list as `subgroup` blocks).
	fields []tfField
	// waitFor adds the optional wait_for attribute: a create waits until the object reaches
	// that state (a Blazar lease until ACTIVE), bounded by the create timeout.
	waitFor []string
	// related are computed lists of the object's children (a lease's reservations).
	related []relatedAttr
	// holds are the error states the provider leaves an object in for the user to repair
	// (a cloudlet whose upgrade failed, repaired by fix) rather than walking it on.
	holds []string
	// links are the kind's links (a disk's machine_id): their field says the state the
	// object aims at, and their value goes with the actions that set it.
	links []linkRule
	// actions are the user actions offered as Terraform actions (offeredActions).
	actions []string
	// timeDriven kinds have no status and no aim: their timers move them (a lease).
	timeDriven bool
	// aim is the state a kind with no status, links or timers is always meant to be in
	// (where its create lands: a cluster is Active).
	aim string
	// derived is the attribute showing the status fields the kind's derive computes (nil for
	// kinds that derive none).
	derived *computedAttr
	// family is the kind's family file's value; optional capabilities are interfaces it
	// implements (withMembers).
	family any
}

// members is the kind's withMembers capability, if its family has it.
func (c kindConfig) members() (withMembers, bool) {
	m, ok := c.family.(withMembers)
	return m, ok
}

// hasStatus reports whether the resource has a status attribute users set.
func (c kindConfig) hasStatus() bool { return c.shape.hasStatus(c) }

// desiredOf is the static state the model asks for: its status, the state its links give (a
// disk with a machine_id is ASSIGNED), or the kind's aim; "" when time drives the kind or the
// model does not say yet.
func (c kindConfig) desiredOf(m *objectModel) string {
	switch {
	case c.hasStatus():
		if m.Status.IsNull() || m.Status.IsUnknown() {
			return ""
		}
		return m.Status.ValueString()
	case len(c.links) > 0:
		return c.linkState(m)
	case c.timeDriven:
		return ""
	}
	return c.aim
}

// linkRule is a link field and where the user actions that set and clear it land.
type linkRule struct{ field, set, cleared string }

// linkState is the state the model's link fields give: where the action setting a link lands
// when one is set, where the one clearing it lands otherwise; "" when one is not known yet.
func (c kindConfig) linkState(m *objectModel) string {
	out := ""
	for _, l := range c.links {
		if v, ok := m.Fields[l.field]; ok && v.IsUnknown() {
			return "" // known at apply
		}
		out = l.cleared
		if m.str(l.field) != "" {
			out = l.set
		}
	}
	return out
}

// linkParams are sent with every action: each link field's value, null when unset (the
// machine a disk attaches to).
func (c kindConfig) linkParams(m *objectModel) map[string]any {
	if len(c.links) == 0 {
		return nil
	}
	out := map[string]any{}
	for _, l := range c.links {
		out[l.field] = nil
		if v := m.str(l.field); v != "" {
			out[l.field] = v
		}
	}
	return out
}

// linkVia is the state an update passes through first when a link moves from one object to
// another (a disk detaches from its machine before it attaches to the next); "" when none.
func (c kindConfig) linkVia(prior, plan *objectModel) string {
	for _, l := range c.links {
		if old, next := prior.str(l.field), plan.str(l.field); old != "" && next != "" && old != next {
			return l.cleared
		}
	}
	return ""
}

// relatedAttr is a computed list of an object's children of one kind: each child's ID, name,
// state and some spec fields.
type relatedAttr struct {
	attr, kind, description string
	fields                  []string
	// each are the parent's list fields the children are made from (one per item).
	each []string
}

func (a relatedAttr) objectType() types.ObjectType {
	t := map[string]attr.Type{"id": types.StringType, "name": types.StringType, "state": types.StringType}
	for _, f := range a.fields {
		t[f] = types.StringType
	}
	return types.ObjectType{AttrTypes: t}
}

// computed is the read-only attribute the list is shown as.
func (a relatedAttr) computed() computedAttr {
	fields := map[string]string{"id": "The " + a.kind + "'s ID.", "name": "The " + a.kind + "'s name.", "state": "The " + a.kind + "'s state."}
	for _, f := range a.fields {
		fields[f] = "The " + a.kind + "'s " + f + "."
	}
	return computedAttr{name: a.attr, description: a.description, typ: types.ListType{ElemType: a.objectType()}, fields: fields}
}

// computedAttrs are the read-only attributes beside the spec fields: lists of children and
// what members give.
func (c kindConfig) computedAttrs() []computedAttr {
	var out []computedAttr
	for _, ra := range c.related {
		out = append(out, ra.computed())
	}
	if m, ok := c.members(); ok {
		out = append(out, m.computed()...)
	}
	if c.derived != nil {
		out = append(out, *c.derived)
	}
	return out
}

// memberHooks is what a kind made of member objects adds to the generic resource. Computed
// attributes come from the members; the plan and the apply ask it where the object stands and
// let it repair and complete its members. Partial failures are warnings: an error would taint
// the object and the next apply would replace the members that work.
type memberHooks interface {
	// computed are the read-only attributes the members give, in schema order.
	computed() []computedAttr
	// observe reads the members of o and returns the computed attributes' values.
	observe(ctx context.Context, d *providerData, o *client.Object) (map[string]attr.Value, diag.Diagnostics)
	// plan tells, from the prior state (as refreshed) and the plan, the state routes start
	// from once the members are repaired, how to name where the object is for messages, and
	// whether the members differ from what the plan asks (an in-place update converges them).
	plan(prior, plan *objectModel, from string) (start, describe string, converge bool)
	// landed checks an object whose create or update (verb) ended (err is the walker's
	// verdict). It returns warnings for members that failed, err nil when the object is usable,
	// and walk false when the route to the desired status must wait for the next apply.
	landed(ctx context.Context, d *providerData, k *lifecycle.Kind, verb string, o *client.Object, err error) (next *client.Object, walk bool, warnings diag.Diagnostics, _ error)
	// repair runs before an update walks its route (an MCI refines its failed VMs).
	repair(ctx context.Context, d *providerData, k *lifecycle.Kind, m *objectModel) (*client.Object, error)
	// complete runs after an update walked its route: it brings the members to the plan's
	// counts and status, and warns about those it could not.
	complete(ctx context.Context, d *providerData, k *lifecycle.Kind, m *objectModel, o *client.Object) (*client.Object, diag.Diagnostics, error)
}

// computedAttr is a read-only attribute a kind's members give.
type computedAttr struct {
	name, description string
	typ               attr.Type
	// fields describes the attributes of a list of objects' elements.
	fields map[string]string
}

// builtinDocs are the family files' additions to the built-in kinds' specs.
func builtinDocs() map[string]familyDoc {
	out := map[string]familyDoc{}
	for _, docs := range []map[string]familyDoc{openvcloudDocs(), blazarDocs(), mobiledgexDocs(), savannaDocs(), tumblebugDocs()} {
		maps.Copy(out, docs)
	}
	return out
}

// configsOf derives the typed resources (made is false) or data-only kinds (made is true: the
// objects a parent makes) of the kinds of reg, in name order, with the family files' docs.
func configsOf(reg *lifecycle.Registry, docs map[string]familyDoc, made bool) []kindConfig {
	var out []kindConfig
	for _, k := range reg.Kinds() {
		if k.MadeByParent != made {
			continue
		}
		cfg := deriveConfig(k, docs[k.Name])
		if m, ok := membersOf(reg, k, cfg); ok {
			// Its members are shown by the capability, not as a list of children.
			cfg.family = m
			cfg.related = slices.DeleteFunc(cfg.related, func(ra relatedAttr) bool { return ra.kind == m.kind })
		}
		cfg.related = relatedAttrsOf(reg, k, cfg)
		out = append(out, cfg)
	}
	return out
}

// typedKinds are the built-in kinds' typed resources, derived from their specs.
func typedKinds() []kindConfig { return configsOf(builtinKinds, builtinDocs(), false) }

// dataOnlyKinds have a data source but no resource: objects their parent makes (a lease's
// reservations).
func dataOnlyKinds() []kindConfig { return configsOf(builtinKinds, builtinDocs(), true) }

// objectModel is a resource's state, read generically by attribute path.
type objectModel struct {
	ID, Name, Kind, ParentID, Status, State, DeletionMode, LastError, WaitFor types.String
	// Fields holds the typed spec fields by attribute name.
	Fields map[string]attr.Value
	// Spec is lifecycle_object's free-form spec: the keys the configuration sets, as native
	// values (a dynamic attribute).
	Spec types.Dynamic
	// EffectiveSpec is lifecycle_object's whole spec as the simulator holds it.
	EffectiveSpec types.Map
	// Computed holds the attributes the kind's members give (memberHooks), by name.
	Computed map[string]attr.Value
	// Timeouts is the resource's timeouts block.
	Timeouts timeouts.Value
}

func (m *objectModel) str(attr string) string {
	if v, ok := m.Fields[attr].(types.String); ok {
		return v.ValueString()
	}
	return ""
}

func quoted(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = "`" + x + "`"
	}
	return strings.Join(q, ", ")
}

// durationOr is an optional duration attribute's value, def when it is not set.
func durationOr(diags *diag.Diagnostics, v timetypes.GoDuration, def time.Duration) time.Duration {
	if v.IsNull() || v.IsUnknown() || v.ValueString() == "" {
		return def
	}
	d, ds := v.ValueGoDuration()
	diags.Append(ds...)
	return d
}

// positiveDuration rejects durations that are zero or negative, at validate time (the
// GoDuration type has already checked the syntax).
func positiveDuration() validator.String { return positiveDurationValidator{} }

type positiveDurationValidator struct{}

func (positiveDurationValidator) Description(context.Context) string {
	return "must be a positive duration"
}

func (v positiveDurationValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (positiveDurationValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	d, err := time.ParseDuration(req.ConfigValue.ValueString())
	if err == nil && d <= 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid duration",
			fmt.Sprintf("%q is not a positive duration; use one such as 30s or 2m.", req.ConfigValue.ValueString()))
	}
}

// familyDoc is what a family file says of a kind beyond its spec: the resource's description
// (Terraform's words) and the family's value,
// whose optional capabilities the engine asks for by interface.
type familyDoc struct {
	description string
	family      any
}

// withMembers is the capability of a kind made of member objects (an MCI is its VMs).
type withMembers interface {
	memberHooks
	// memberKind is the kind of the members, shown by the capability rather than as a list
	// of children.
	memberKind() string
}
