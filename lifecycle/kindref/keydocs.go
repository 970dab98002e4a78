package kindref

import "github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"

// keyDoc documents one key of the spec format for the reference page and the JSON Schema.
// Every key of the Go types has one (a test checks it), so a new key cannot ship undocumented.
type keyDoc struct {
	// Type says what the value is, in the spec's words ("list of static states"); empty means
	// the shape's own word.
	Type string
	// Default is what an omitted key means.
	Default string
	Doc     string
	// Example is a short YAML example of the key in place.
	Example string
	// Required keys must be written.
	Required bool
	// Enum lists the only values allowed.
	Enum []string
}

// typeDocs introduce each object of the format, keyed by its reference anchor.
var typeDocs = map[string]string{
	"file":        "A kind file holds a list of kinds under `kinds:`. `lifecyclesim --kinds FILE` serves them next to the built-in ones; `lifecyclesim check FILE` checks them first.",
	"kind":        "A kind is the state machine of one object type: its states, the action a create runs, its other actions and what a failure does, plus its spec fields and its relations to other kinds.",
	"states":      "The kind's states, by group. Every state is static (the object rests in it until something acts) or transition (a phase of a running action). Final, error and gone states are static states with a meaning; a state listed only under one of them is static without listing it twice.",
	"action":      "An action moves an object from one of its `from` static states through its `via` phases (transition states, each taking a while) to its `to` static state, or back where it started (`returns`). The create action is an action too, started by a create request.",
	"phase":       "A phase is one transition state an action passes through. Write it as the state's name, or as a mapping when it needs an actor, a duration or `skippable`.",
	"failure":     "What happens when an action fails in one of its phases (failures are injected with the simulator's fault rules). The kind's `failure` applies to every action without its own.",
	"parent":      "The kind objects of this kind live under. A create names the parent with `parent_id`.",
	"field":       "A spec field. The simulator validates requests against it (a 400 names the field) and the provider builds its typed schema and plan-time checks from it. A kind that declares no fields accepts any spec.",
	"child":       "Objects a create makes together with its object, in the same store transaction: one child, one per item of a list field (`each`), or `count` children per item.",
	"propagation": "Carries an action's start, or a landing in a state, over to related objects: running an action on them, removing them or aborting their operations.",
	"selector":    "The related objects a propagation acts on: pick exactly one of `children`, `descendants`, `parent` or `linked`.",
	"linkref":     "Objects of another kind whose spec field holds this object's ID.",
	"limit":       "Bounds how many propagated operations run at once, by two levels of spec fields of the related objects (per cloud, how many regions at once and how many VMs per region). The rest are queued.",
	"grouplimit":  "How many `inner` groups of one `outer` value run at once, and how many objects per inner group.",
	"derive":      "Computes the object's state and status fields from its children of one kind, recomputed in the transaction of every change that moves them. Generic derivations (`use`) are open to any kind; a family `function` is Go code a family registers (`tumblebug.mci_status`, `blazar.lease_status`) for what they cannot say.",
	"derivation":  "One generic derivation. `count_by_state` writes a map of child state to count; `count_in` the number of children in one of the `in` states; `all_in` true when there are children and all are in the `in` states; `any_in` true when some child is; `dominant_state` the state most children are in (ties to the earlier state of `order`), which is also the derived state.",
	"guard":       "Requires an ancestor (walking `parent` up) or a linked object to be in one of some states for actions to run. A refusal (422) names the blocking object, its state and the states it must be in.",
	"link":        "A spec field that points at an object of another kind: the actions of `set_by` need the object to exist (and be in one of the `in` states); those of `cleared_by` clear the field.",
}

var keyDocs = map[string]keyDoc{
	"File.Kinds": {Type: "list of kinds", Required: true, Doc: "The kinds of the file.",
		Example: "kinds:\n  - name: widget\n    collection: widgets\n    states: {static: [OFF, ON]}\n    create: {to: OFF}"},

	"Kind.Name": {Required: true, Doc: "The kind's name: lower case and underscores. It must not be a built-in kind's name.", Example: "name: widget"},
	"Kind.Family": {Doc: "A group of related kinds (the built-in families are openvcloud, blazar, mobiledgex, savanna, tumblebug). The relations diagram is drawn per family.",
		Example: "family: workshop"},
	"Kind.Collection":  {Required: true, Doc: "The URL path segment of the kind's objects (`/v1/widgets`), usually the plural of the name: letters, digits, `-` and `_` (no `/`, `?`, `#`, `%`, `;` or blanks), and not `kinds` or `sim`, which are routes of the API itself.", Example: "collection: widgets"},
	"Kind.Description": {Doc: "What the kind is, shown in the docs and `GET /v1/kinds`.", Example: "description: A widget on the workbench."},
	"Kind.States":      {Required: true, Doc: "The kind's states by group; see [states](#states).", Example: "states:\n  static: [OFF, ON, BROKEN]\n  transition: [STARTING]\n  error: [BROKEN]"},
	"Kind.Initial": {Type: "static state", Doc: "The state an object is modelled in before its create action runs (VIRTUAL, MODELED). The create then starts from it, and a failed create rolls back to it. Without one, the create starts from nothing.",
		Example: "initial: MODELED"},
	"Kind.Hold": {Type: "static state", Doc: "Where a create that asks to hold (`\"hold\": true` in the create request; CB-Tumblebug's `option=hold`) waits instead of starting: no operation runs and no children are made until an action with `continues_create` starts from it. It needs such an action; the other actions of the kind (forced ones too) do not start from it.",
		Example: "hold: Holding"},
	"Kind.Create": {Type: "action", Required: true, Doc: "The action a create request runs; its name defaults to `create`, and it needs no `from` (it starts from `initial`, or from nothing).",
		Example: "create: {via: [STARTING], to: ON, failure: {to: BROKEN}}"},
	"Kind.Actions": {Type: "list of actions", Doc: "Every other action.", Example: "actions:\n  - {name: stop, from: [ON], via: [STOPPING], to: OFF}"},
	"Kind.Failure": {Type: "failure", Default: "none: an action that passes through phases then needs its own `failure`",
		Doc: "The failure rule of every action without its own.", Example: "failure: {rollback: true}"},
	"Kind.Parent": {Type: "parent", Doc: "The kind this kind's objects live under.", Example: "parent: {kind: workbench, in: [OPEN], delete: refuse}"},
	"Kind.Deletion": {Type: "map of mode to list of actions", Enum: []string{"delete", "destroy"}, Doc: "What a DELETE runs, per mode: `destroy` (permanent, the default of the provider) and `delete` (to a recycle bin). A DELETE runs the first of the mode's actions allowed from the object's state. Without it, a DELETE is refused, and `terraform destroy` can only forget the object (with a warning).",
		Example: "deletion: {destroy: [scrap]}"},
	"Kind.Update": {Type: "action", Default: "spec changes apply at once", Doc: "The action a spec change (PATCH) runs.", Example: "update: reconfigure"},
	"Kind.ForceAny": {Default: "false", Doc: "A forced user action may start from any static state that is not final, skipping the checks (CB-Tumblebug's force flag). One action at a time still holds.",
		Example: "force_any: true"},
	"Kind.DefaultDuration": {Default: "1s", Doc: "How long a phase takes when it names no duration, before the simulator's time scale.", Example: "default_duration: 2s"},
	"Kind.Fields":          {Type: "list of fields", Default: "none: any spec is accepted", Doc: "The spec fields; see [field](#field).", Example: "fields:\n  - {name: size, type: integer, min: 1, max: 10, default: 1}"},
	"Kind.ExtraFields":     {Default: "false", Doc: "Keep spec fields beyond the declared ones as they are, unchecked.", Example: "extra_fields: true"},
	"Kind.MadeByParent":    {Default: "false", Doc: "Objects of this kind are made only by their parent's create (`children`), never through their own collection.", Example: "made_by_parent: true"},
	"Kind.Children":        {Type: "list of children", Doc: "Objects a create makes with its object; see [child](#child).", Example: "children:\n  - {kind: part, each: parts}"},
	"Kind.Propagate":       {Type: "list of propagations", Doc: "Actions and landings carried over to related objects; see [propagation](#propagation).", Example: "propagate:\n  - {start: stop, to: {children: part}, wait: true}"},
	"Kind.Derive":          {Type: "derive", Doc: "State and status fields computed from children; see [derive](#derive).", Example: "derive:\n  children: part\n  use:\n    - {function: all_in, status: ready, in: [READY]}"},
	"Kind.Guards":          {Type: "list of guards", Doc: "States ancestors or linked objects must be in for actions to run; see [guard](#guard).", Example: "guards:\n  - {ancestor: workshop, in: [OPEN]}"},
	"Kind.Links":           {Type: "list of links", Doc: "Spec fields pointing at objects of other kinds; see [link](#link).", Example: "links:\n  - {field: bench_id, kind: bench, set_by: [mount], in: [FREE], cleared_by: [unmount]}"},
	"Kind.Invariants": {Type: "list of invariant names", Doc: "Cross-object checks registered in Go by a family (`blazar.lease_consistency`, `tumblebug.mci_aggregate`); family-only: a user kind cannot define one.",
		Example: "invariants: [blazar.lease_consistency]"},

	"States.Static":     {Type: "list of states", Required: true, Doc: "States an object rests in until an action is requested (or a timer or the system acts). A desired `status` is one of them.", Example: "static: [OFF, ON]"},
	"States.Transition": {Type: "list of states", Doc: "Phases of running actions. Each must be in some action's `via` (or a failure's).", Example: "transition: [STARTING, STOPPING]"},
	"States.Final":      {Type: "list of states", Doc: "Static states users cannot leave (DESTROYED).", Example: "final: [SCRAPPED]"},
	"States.Error":      {Type: "list of states", Doc: "Static states recording an unrecoverable failure; a waiter stops on them with the error. Usually a failure's `to`.", Example: "error: [BROKEN]"},
	"States.Gone":       {Type: "list of states", Doc: "Static states meaning the object no longer exists: reaching one removes it.", Example: "gone: [DELETED]"},

	"Action.Name":        {Doc: "The action's name, as `POST /v1/{collection}/{id}/actions/{name}` calls it. Every action needs one; the create action's defaults to `create`.", Example: "name: start"},
	"Action.Description": {Doc: "What the action does.", Example: "description: Power the widget on."},
	"Action.From":        {Type: "list of static states", Doc: "The static states the action may start from. Every action but the create needs `from` (or `from_any`).", Example: "from: [OFF, BROKEN]"},
	"Action.FromAny":     {Default: "false", Doc: "The action may start from every state, transition states included; starting it preempts the running operation (deletes).", Example: "from_any: true"},
	"Action.ForceFrom":   {Type: "list of static states", Doc: "Static states the action may start from only when forced.", Example: "force_from: [BROKEN]"},
	"Action.Via":         {Type: "list of phases", Default: "none: an instant move", Doc: "The transition states the action passes through, in order.", Example: "via: [STARTING, {state: WARMING, duration: 5s}]"},
	"Action.To":          {Type: "static state", Doc: "Where the action lands. Each action needs `to` or `returns: true`.", Example: "to: ON"},
	"Action.Returns":     {Default: "false", Doc: "The action lands back in the state it started from (reboot, clone).", Example: "returns: true"},
	"Action.With": {Type: "kind name", Doc: "The kind of another object the action works on (a machine's `attach_disk` attaches a disk, its `clone` makes a machine). " +
		"The API runs it as a transition of this object; Terraform's `action` blocks and `lifecycle_action` do not offer it, since an action's parameters cannot name that object.",
		Example: "with: disk"},
	"Action.Actor": {Default: "user", Enum: []string{"user", "system", "timer", "crm", "controller"},
		Doc: "Who starts the action: `user` actions are offered through the API and routes; `system` ones by the simulator (a propagation, `after`); `timer` ones at the time in the `at` field.", Example: "actor: system"},
	"Action.After":   {Doc: "A system action starts by itself once the object has sat that long in a `from` state (self-healing).", Example: "after: 30s"},
	"Action.At":      {Type: "time field", Doc: "The spec field holding the time a timer action starts at.", Example: "at: start_date"},
	"Action.Where":   {Type: "map of spec field to value", Default: "every object", Doc: "Only objects whose spec has these values start this `at` or `after` action by themselves (Blazar's before_end_lease event runs at its time; the other events run with their lease).", Example: "where: {event_type: before_end_lease}"},
	"Action.Failure": {Type: "failure", Default: "the kind's `failure`", Doc: "This action's failure rule.", Example: "failure: {to: BROKEN}"},
	"Action.ParentStates": {Type: "list of parent states", Default: "the parent's `in`",
		Doc: "The states the parent must be in for this action, overriding the kind's `parent.in`.", Example: "parent_in: [OPEN, PAUSED]"},
	"Action.IgnoreParent": {Default: "false", Doc: "The action runs whatever the parent's state (deletes).", Example: "ignore_parent: true"},
	"Action.ContinuesCreate": {Default: "false", Doc: "The action continues a held create (see `hold`): it starts only from the hold state and runs the create's phases to the create's `to`, making the kind's children as the create does. Leave out its `via` and `to`: they are the create's.",
		Example: "{name: continue, from: [Holding], continues_create: true}"},
	"Action.Derived": {Default: "false", Doc: "The action lands in the state `derive` gives (Blazar's update lands in the status its events give); routes treat it as returning.", Example: "derived: true"},

	"Phase.State": {Type: "transition state", Required: true, Doc: "The transition state.", Example: "state: WARMING"},
	"Phase.Actor": {Default: "the system", Enum: []string{"user", "system", "timer", "crm", "controller"}, Doc: "Who completes the phase (drawn on the diagram).", Example: "actor: crm"},
	"Phase.Duration": {Default: "the kind's `default_duration`", Doc: "How long the phase takes, before the time scale.",
		Example: "duration: 5s"},
	"Phase.Skippable": {Default: "false", Doc: "The phase may be skipped when its message is lost (MobiledgeX's CRM).", Example: "skippable: true"},

	"Failure.Rollback": {Default: "false", Doc: "A failure returns the object to the state the action started from. A create from nothing cannot roll back: give it a `to`, or give the kind an `initial` state.", Example: "failure: {rollback: true}"},
	"Failure.Via":      {Type: "list of phases", Doc: "Transition states a failure passes through first (MobiledgeX's CreateError).", Example: "failure: {via: [UNDOING], to: OFF}"},
	"Failure.To":       {Type: "static state", Doc: "The static state a failure lands in when it does not roll back (usually an error state).", Example: "failure: {to: BROKEN}"},
	"Failure.Retry":    {Default: "false", Doc: "A failed phase is retried instead of left (a delete that must finish).", Example: "failure: {retry: true}"},
	"Failure.Fatal":    {Type: "static state", Doc: "Where a fatal failure lands, for actions whose ordinary failures roll back.", Example: "failure: {rollback: true, fatal: BROKEN}"},

	"Parent.Kind":   {Required: true, Type: "kind", Doc: "The parent kind.", Example: "parent: {kind: workbench}"},
	"Parent.States": {Type: "list of the parent's static states", Default: "any state", Doc: "The states the parent must be in for this kind's actions to run (and for a create).", Example: "parent: {kind: workbench, in: [OPEN]}"},
	"Parent.Delete": {Default: "cascade", Enum: []string{lifecycle.DeleteRefuse, lifecycle.DeleteCascade, lifecycle.DeleteDetach},
		Doc: "What deleting the parent does to live children: `refuse` the delete (422 naming them, also in its `details.dependents`), `cascade` (remove them with it) or `detach` (keep them, parentless). `refuse` needs a kind whose objects can go (a `deletion:`, or another action, into a `gone` state): over one whose objects never go, the parent could never be deleted, and the file is refused.", Example: "parent: {kind: workbench, delete: refuse}"},

	"Field.Name": {Doc: "The field's name in the spec (and the Terraform attribute's). Every field needs one, except a list's `items`.", Example: "name: size"},
	"Field.Type": {Required: true, Enum: []string{"string", "integer", "number", "bool", "time", "list", "object"},
		Doc: "The value's type. `bool` is true or false; `time` is an RFC 3339 string; a `list` declares its `items`, an `object` its `fields`.", Example: "type: bool"},
	"Field.Description": {Doc: "What the field means; shown in docs and in the 400 of a missing required field.", Example: "description: How big the widget is."},
	"Field.Required":    {Default: "false", Doc: "The field must be set at create.", Example: "required: true"},
	"Field.Default":     {Type: "value of the field's type", Doc: "The value a create without the field gets.", Example: "default: 1"},
	"Field.Enum":        {Type: "list of strings", Doc: "The values a string may take.", Example: "enum: [small, large]"},
	"Field.Min":         {Doc: "The smallest number or integer allowed.", Example: "min: 1"},
	"Field.Max":         {Doc: "The largest number or integer allowed.", Example: "max: 10"},
	"Field.MaxLength":   {Default: "4096", Doc: "The longest string allowed, in bytes.", Example: "max_length: 64"},
	"Field.MinItems":    {Default: "0", Doc: "The fewest items of a list.", Example: "min_items: 1"},
	"Field.MaxItems":    {Default: "1000", Doc: "The most items of a list.", Example: "max_items: 20"},
	"Field.Items":       {Type: "field (without name)", Doc: "A list's item type.", Example: "items: {type: object, fields: [{name: name, type: string, required: true}]}"},
	"Field.ItemName":    {Default: "the field's name", Doc: "What one item of one of the kind's own lists is called: the Terraform provider names the list's nested block after it, one block per item.", Example: "item_name: subgroup"},
	"Field.Fields":      {Type: "list of fields", Doc: "An object's fields.", Example: "fields: [{name: host, type: string}]"},
	"Field.After":       {Type: "time field", Doc: "A time field of the same object this time must be later than.", Example: "after: start_date"},
	"Field.PastIsNow":   {Default: "false", Doc: "A time in the past, or an omitted one, means now.", Example: "past_is_now: true"},
	"Field.Immutable":   {Default: "false", Doc: "The field cannot change after create: Terraform plans a replacement.", Example: "immutable: true"},
	"Field.UpdatableIn": {Type: "list of static states", Default: "any state the update runs from", Doc: "The states an object must be in for a change of this field.", Example: "updatable_in: [OFF]"},

	"Child.Kind":  {Required: true, Type: "kind", Doc: "The child kind; its `parent.kind` must be this kind.", Example: "kind: part"},
	"Child.Name":  {Doc: "A single child's name suffix: the child is named `<parent>-<name>`.", Example: "name: lid"},
	"Child.Each":  {Type: "list field", Doc: "A list field of the parent: one child per item, the item's fields becoming the child's spec, named `<parent>-<item name>`.", Example: "each: parts"},
	"Child.Count": {Type: "integer field of the items", Doc: "That many children per item of `each` (not copied into their spec). Needs `each`.", Example: "count: count"},
	"Child.Group": {Type: "child spec field", Doc: "The child spec field recording which item a child came from, by the item's `name` (the items need a `name` field); changing an item's count scales its children.",
		Example: "group: group"},
	"Child.Spec":      {Type: "map of field to value", Doc: "Fixed spec values of the children.", Example: "spec: {colour: red}"},
	"Child.Copy":      {Type: "map of child field to parent field", Doc: "Child spec fields set from the parent's, kept in step when the parent's change.", Example: "copy: {size: size}"},
	"Child.Before":    {Type: "duration", Default: "0s", Doc: "The copied time fields are that long before the parent's (Blazar's before_end_lease event, an hour before `end_date`). When the parent's field moves, the child's moves by as much, keeping its lead. Needs `copy` from time fields.", Example: "before: 1h"},
	"Child.NotBefore": {Type: "time field", Doc: "A time field of the parent the copied times are never earlier than (a lease shorter than `before` has its before_end_lease event at its `start_date`).", Example: "not_before: start_date"},
	"Child.Moved":     {Type: "action of the child kind", Doc: "The action a child runs when a copied field of its moves, if it is allowed from the child's state (a done event is UNDONE again, to run at its new time).", Example: "moved: rearm"},
	"Child.Wait":      {Default: "false", Doc: "The parent's create (and a scale) completes only when these children have landed.", Example: "wait: true"},
	"Child.Limit":     {Type: "limit", Doc: "Bounds the children's creates running at once (the parent's create and a scale-out provision under it; the rest wait in their initial state, queued); see [limit](#limit). Needs `wait: true`.", Example: "limit: {outer: csp, inner: region, default: {inner: 5, per_inner: 20}}"},
	"Child.ScaleIn":   {Type: "action of the child kind", Doc: "The action that ends surplus children when an item's count goes down; they are removed once it lands, newest first.", Example: "scale_in: scrap"},

	"Propagation.Start":  {Type: "action or list of actions", Doc: "The actions whose start propagates. A propagation has `start` or `land`.", Example: "start: [stop, start]"},
	"Propagation.Land":   {Type: "static state or list of static states", Doc: "The states whose reaching propagates.", Example: "land: BROKEN"},
	"Propagation.From":   {Type: "static state or list", Default: "any", Doc: "Only landings from these static states.", Example: "from: [OFF]"},
	"Propagation.Action": {Type: "action or list of actions", Default: "any", Doc: "Only landings by these actions.", Example: "actions: start"},
	"Propagation.Failed": {Default: "false", Doc: "Only landings of failed actions (otherwise only successful ones).", Example: "failed: true"},
	"Propagation.To":     {Type: "selector", Required: true, Doc: "The related objects; see [selector](#selector).", Example: "to: {children: part}"},
	"Propagation.Where":  {Type: "map of spec field to value", Doc: "Only related objects whose spec has these values.", Example: "where: {side: left}"},
	"Propagation.States": {Type: "state or list of states of the related kind", Default: "any", Doc: "Only related objects in these states; the others are left alone.", Example: "in: [READY]"},
	"Propagation.Run": {Type: "action of the related kind", Default: "the action of the same name as the one that started", Doc: "The action started on each related object; objects it is not allowed from are skipped and reported.",
		Example: "run: stop"},
	"Propagation.Force":  {Default: "false", Doc: "Start `run` as a forced action.", Example: "force: true"},
	"Propagation.Remove": {Default: "false", Doc: "Remove the related objects instead of running an action.", Example: "remove: true"},
	"Propagation.Abort":  {Default: "false", Doc: "End the related objects' running operations where they started.", Example: "abort: true"},
	"Propagation.Wait":   {Default: "false", Doc: "The originating operation completes only when the propagated ones have landed (`start` only).", Example: "wait: true"},
	"Propagation.Follow": {Default: "false", Doc: "The propagated operations land when the originating one does, in the same transaction, and fail when it fails (`start` only).", Example: "follow: true"},
	"Propagation.Limit":  {Type: "limit", Doc: "Bounds the propagated operations running at once; see [limit](#limit). Needs `wait: true`.", Example: "limit: {outer: csp, inner: region, default: {inner: 5, per_inner: 20}}"},

	"Selector.Children":    {Type: "kind", Doc: "The object's children of that kind.", Example: "to: {children: part}"},
	"Selector.Descendants": {Type: "kind", Doc: "Objects of that kind at any depth below the object.", Example: "to: {descendants: screw}"},
	"Selector.Parent":      {Default: "false", Doc: "The object's parent.", Example: "to: {parent: true}"},
	"Selector.Linked":      {Type: "linked selector", Doc: "Objects of a kind whose spec field holds this object's ID.", Example: "to: {linked: {kind: disk, field: machine_id}}"},
	"LinkRef.Kind":         {Type: "kind", Required: true, Doc: "The linked kind.", Example: "linked: {kind: disk, field: machine_id}"},
	"LinkRef.Field":        {Type: "spec field of that kind", Required: true, Doc: "Its spec field holding this object's ID.", Example: "linked: {kind: disk, field: machine_id}"},

	"Limit.Outer":         {Required: true, Type: "spec field", Doc: "The related objects' field grouping them at the outer level.", Example: "outer: csp"},
	"Limit.Inner":         {Required: true, Type: "spec field", Doc: "The field grouping them inside an outer group.", Example: "inner: region"},
	"Limit.Groups":        {Type: "map of outer value to group limit", Doc: "Limits per outer value.", Example: "groups: {aws: {inner: 10, per_inner: 30}}"},
	"Limit.Default":       {Required: true, Type: "group limit", Doc: "Limits of the outer values `groups` does not name.", Example: "default: {inner: 5, per_inner: 20}"},
	"GroupLimit.Inner":    {Required: true, Doc: "How many inner groups run at once (at least 1).", Example: "inner: 5"},
	"GroupLimit.PerInner": {Required: true, Doc: "How many objects per inner group run at once (at least 1).", Example: "per_inner: 20"},

	"Derive.Function": {Type: "family function", Doc: "A derive function a family registers in Go, run after `use` (family-only: `tumblebug.mci_status`, `blazar.lease_status`).", Example: "function: tumblebug.mci_status"},
	"Derive.From":     {Type: "kind", Required: true, Doc: "The child kind whose objects feed the derivations.", Example: "children: part"},
	"Derive.State":    {Default: "false", Doc: "The derived state becomes the object's state whenever no operation runs on it (and it is one of its static states).", Example: "state: true"},
	"Derive.Use":      {Type: "list of derivations", Doc: "Generic derivations, applied in order; see [derivation](#derivation).", Example: "use:\n  - {function: count_by_state, status: parts}\n  - {function: dominant_state, order: [BROKEN, READY], empty: EMPTY}"},

	"Derivation.Function": {Required: true, Type: "derivation name", Doc: "`count_by_state`, `count_in`, `all_in`, `any_in` or `dominant_state` (or a family function).", Example: "function: all_in"},
	"Derivation.Status":   {Type: "status field", Doc: "The status field the result is written to. Needed by all but `dominant_state`, whose result is the derived state (and the field, if named).", Example: "status: ready"},
	"Derivation.In":       {Type: "list of the child kind's states", Doc: "The child states `count_in`, `all_in` and `any_in` look for.", Example: "in: [READY]"},
	"Derivation.Order":    {Type: "list of the child kind's states", Doc: "`dominant_state`'s tie order: the earlier state wins; unlisted states come after, alphabetically.", Example: "order: [BROKEN, READY]"},
	"Derivation.Empty":    {Type: "state", Default: "nothing is derived", Doc: "`dominant_state`'s result when there are no children.", Example: "empty: EMPTY"},

	"Guard.Ancestor": {Type: "kind", Doc: "The kind of the ancestor the guard looks at (walking `parent` up, any number of levels). A guard has `ancestor` or `link`.", Example: "ancestor: workshop"},
	"Guard.Link":     {Type: "link field", Doc: "The link field holding the ID of the object the guard looks at (one of the kind's `links`).", Example: "link: bench_id"},
	"Guard.States":   {Type: "list of that kind's states", Required: true, Doc: "The states the object must be in.", Example: "in: [OPEN]"},
	"Guard.Actions":  {Type: "action or list of actions", Default: "every user action that does not `ignore_parent`", Doc: "The actions the guard applies to (the create included).", Example: "actions: [start]"},

	"Link.Field":     {Type: "spec field", Required: true, Doc: "The spec field holding the other object's ID.", Example: "field: bench_id"},
	"Link.Kind":      {Type: "kind", Required: true, Doc: "The kind it points at.", Example: "kind: bench"},
	"Link.SetBy":     {Type: "action or list of actions", Doc: "Actions that set the field: the object it names must exist (and be in one of `in`).", Example: "set_by: [mount]"},
	"Link.States":    {Type: "list of that kind's states", Default: "any", Doc: "The states the linked object must be in when an action sets the link: an action of `set_by`, the create when it is one of them (a create naming an object in another state is refused), and the kind's `update` when it is one (a `PATCH` of the field).", Example: "in: [FREE]"},
	"Link.ClearedBy": {Type: "action or list of actions", Doc: "Actions that clear the field.", Example: "cleared_by: [unmount]"},
	"Link.Delete":    {Type: "string", Default: "clear", Doc: "What removing the linked object does while the field names it: `clear` the field, or `refuse` the removal (422 naming the objects whose link names it, also in its `details.dependents`; delete them first), as Sahara refuses to delete a cluster template its clusters were made from. One of `clear`, `refuse`. `refuse` needs objects that can let go: over a kind whose objects never go (no action, a `deletion:` included, into a `gone` state), whose field is required or immutable and that no action clears (`cleared_by`), the linked object could never be deleted, and the file is refused.", Example: "delete: refuse"},
}
