package provider

import (
	"context"
	"fmt"
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

// kindConfig is what a kind's file declares: its schema beyond the common attributes, and
// how attributes map onto the object. The CRUD is shared (kindResource).
type kindConfig struct {
	// typeName is the resource type suffix: lifecycle_<typeName>.
	typeName string
	// kind is the lifecycle kind; empty for lifecycle_object, whose kind is an attribute.
	kind        string
	description string
	// parentAttr names the attribute holding the parent's ID (cloudspace_id); parentKind is
	// what it must point at (for descriptions).
	parentAttr, parentKind string
	// statuses are the static states users may ask for; nil means no status attribute.
	statuses []string
	// fields are the kind's declared spec fields (declaredFields); names renames some of
	// them (a spec's `subgroups` list shown as `subgroup` blocks).
	fields []tfField
	names  map[string]string
	// lastError adds the computed last_error attribute: the message of the last failed
	// operation (a rolled-back scale).
	lastError bool
	// waitFor adds the optional wait_for attribute: a create waits until the object reaches
	// that state (a Blazar lease until ACTIVE), bounded by the create timeout.
	waitFor []string
	// related are computed lists of the object's children (a lease's reservations).
	related []relatedAttr
	// notice, if set, explains at refresh a state the object reached by itself (a lease
	// that ended); "" for none.
	notice func(o *client.Object) string
	// desired derives the desired state when the kind has no status attribute (a disk is
	// ASSIGNED when machine_id is set).
	desired func(m *objectModel) string
	// params are sent with every action (the machine a disk attaches to).
	params func(m *objectModel) map[string]any
	// via, if set, names a state an update must pass through first (a disk moving to another
	// machine detaches first).
	via func(prior, plan *objectModel) string
	// holds are static states the provider leaves an object in rather than walking it to the
	// desired state: a repair that is an administrator's call (a cloudlet whose upgrade failed).
	holds []string
	// members, if set, manages an object made of other objects (an MCI is its VMs): the
	// engine calls it at fixed points of the plan and of the apply; the kind's file holds the
	// rules.
	members memberHooks
}

// relatedAttr is a computed list of an object's children of one kind: each child's ID, name,
// state and some spec fields.
type relatedAttr struct {
	attr, kind, description string
	fields                  []string
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
	if c.members != nil {
		out = append(out, c.members.computed()...)
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
	// created checks a new object whose create ended (err is the walker's verdict). It returns
	// warnings for members that failed, err nil when the object is usable, and walk false when
	// the route to the desired status must wait for the next apply.
	created(ctx context.Context, d *providerData, k *lifecycle.Kind, o *client.Object, err error) (next *client.Object, walk bool, warnings diag.Diagnostics, _ error)
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

// typedKinds are the resources with a schema of their own, built from their kind's declared
// spec fields.
func typedKinds() []kindConfig {
	kinds := []kindConfig{accountKind(), cloudspaceKind(), machineKind(), diskKind(), imageKind(), nodeKind(),
		clusterKind(), cloudletKind(), clusterInstKind(), appInstKind(), leaseKind(), mciKind()}
	for i := range kinds {
		kinds[i].fields = declaredFields(kinds[i].kind, kinds[i].names)
	}
	return kinds
}

// dataOnlyKinds have a data source but no resource: objects their parent makes (a lease's
// reservations).
func dataOnlyKinds() []kindConfig {
	kinds := []kindConfig{reservationKind(), vmKind()}
	for i := range kinds {
		kinds[i].fields = declaredFields(kinds[i].kind, kinds[i].names)
	}
	return kinds
}

// objectModel is a resource's state, read generically by attribute path.
type objectModel struct {
	ID, Name, Kind, ParentID, Status, State, DeletionMode, LastError, WaitFor types.String
	// Fields holds the typed spec fields by attribute name.
	Fields map[string]attr.Value
	// Spec is lifecycle_object's free-form spec: the keys the configuration sets.
	Spec types.Map
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
