package lifecycle

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// wantSpecErr is one expected problem of a malformed spec file.
type wantSpecErr struct {
	kind  string
	field string
	line  int
	msg   string // substring of the message
}

func specErrors(t *testing.T, err error) []*SpecError {
	t.Helper()
	var many SpecErrors
	if errors.As(err, &many) {
		return many
	}
	var one *SpecError
	if errors.As(err, &one) {
		return []*SpecError{one}
	}
	t.Fatalf("error = %T %v, want *SpecError or SpecErrors", err, err)
	return nil
}

// assertSpecErrors checks err holds exactly the wanted problems, each naming the file, the
// kind, the field and the line, in its fields and in its message.
func assertSpecErrors(t *testing.T, file string, err error, want []wantSpecErr) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %+v", want)
	}
	got := specErrors(t, err)
	if len(got) != len(want) {
		t.Errorf("got %d errors, want %d:\n%v", len(got), len(want), err)
	}
	for i, w := range want {
		if i >= len(got) {
			break
		}
		g := got[i]
		if g.File != file || g.Kind != w.kind || g.Field != w.field || g.Line != w.line || !strings.Contains(g.Msg, w.msg) {
			t.Errorf("error %d = {File:%q Kind:%q Field:%q Line:%d Msg:%q}\nwant     {File:%q Kind:%q Field:%q Line:%d Msg:~%q}",
				i, g.File, g.Kind, g.Field, g.Line, g.Msg, file, w.kind, w.field, w.line, w.msg)
		}
		text := g.Error()
		for _, part := range []string{file, w.field, w.msg} {
			if !strings.Contains(text, part) {
				t.Errorf("Error() = %q does not name %q", text, part)
			}
		}
		if w.kind != "" && !strings.Contains(text, `kind "`+w.kind+`"`) {
			t.Errorf("Error() = %q does not name kind %q", text, w.kind)
		}
		if w.line > 0 && !strings.Contains(text, file+":"+strconv.Itoa(w.line)+":") {
			t.Errorf("Error() = %q does not name line %d", text, w.line)
		}
	}
}

// malformedCase is a kind file the loader refuses and the errors it gives.
type malformedCase struct {
	name string
	spec string
	want []wantSpecErr
}

func TestParseMalformed(t *testing.T) {
	tests := []malformedCase{
		{
			name: "unknown state",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states:
      static: [A, B]
      transition: [T]
    failure: {rollback: true}
    create: {to: A}
    actions:
      - name: go
        from: [A, C]
        via: [T]
        to: B
`,
			want: []wantSpecErr{{"gadget", "actions[0].from[1]", 11, `unknown state "C"`}},
		},
		{
			name: "unknown phase state",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states:
      static: [A, B]
      transition: [T]
    failure: {rollback: true}
    create: {to: A}
    actions:
      - name: go
        from: [A]
        via: [T, U]
        to: B
`,
			want: []wantSpecErr{{"gadget", "actions[0].via[1]", 12, `unknown state "U"`}},
		},
		{
			name: "phase is a static state",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states:
      static: [A, B]
      transition: [T]
    failure: {rollback: true}
    create: {to: A}
    actions:
      - name: go
        from: [A]
        via:
          - T
          - B
        to: B
`,
			want: []wantSpecErr{{"gadget", "actions[0].via[1]", 14, `"B" is a static state; a phase must be a transition state`}},
		},
		{
			name: "action to is not static",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states:
      static: [A, B]
      transition: [T]
    failure: {rollback: true}
    create: {to: A}
    actions:
      - {name: back, from: [B], to: A}
      - name: go
        from: [A]
        via: [T]
        to: T
`,
			want: []wantSpecErr{{"gadget", "actions[1].to", 14, `"T" is a transition state; a static state is needed here`}},
		},
		{
			name: "unreachable state",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states:
      static: [A, B, C]
    create: {to: A}
    actions:
      - {name: go, from: [A], to: B}
      - {name: orphan, from: [C], to: A}
`,
			want: []wantSpecErr{{"gadget", "states.static[2]", 5, `state "C" is unreachable from the create action`}},
		},
		{
			name: "transition state with no exit",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states:
      static: [A, B]
      transition:
        - T
        - STUCK
    failure: {rollback: true}
    create: {to: A}
    actions:
      - {name: go, from: [A], via: [T], to: B}
`,
			want: []wantSpecErr{{"gadget", "states.transition[1]", 8, `transition state "STUCK" has no exit`}},
		},
		{
			name: "duplicate state",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states:
      static: [A, B]
      transition: [T, B]
    failure: {rollback: true}
    create: {to: A}
    actions:
      - {name: go, from: [A], via: [T], to: B}
`,
			want: []wantSpecErr{
				{"gadget", "states.transition[1]", 6, `duplicate state "B"`},
				// B counts as the later declaration from then on.
				{"gadget", "actions[0].to", 10, `"B" is a transition state`},
			},
		},
		{
			name: "duplicate action",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A, B]}
    create: {to: A}
    actions:
      - {name: go, from: [A], to: B}
      - {name: go, from: [B], to: A}
`,
			want: []wantSpecErr{{"gadget", "actions[1].name", 8, `duplicate action "go"`}},
		},
		{
			name: "unknown field",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    colour: red
    states: {static: [A]}
    create: {to: A}
`,
			want: []wantSpecErr{{"gadget", "colour", 4, `unknown key "colour" in a kind; its keys are name, family, collection,`}},
		},
		{
			name: "unknown field in a phase of the second kind",
			spec: `kinds:
  - name: first
    collection: firsts
    states: {static: [A]}
    create: {to: A}
  - name: gadget
    collection: gadgets
    states: {static: [A, B], transition: [T]}
    failure: {rollback: true}
    create: {to: A}
    actions:
      - name: go
        from: [A]
        via:
          - state: T
            colour: red
        to: B
`,
			want: []wantSpecErr{{"gadget", "actions[0].via[0].colour", 16, `unknown key "colour" in a phase; its keys are state, actor, duration, skippable`}},
		},
		{
			name: "bad duration",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A]}
    default_duration: soon
    create: {to: A}
`,
			want: []wantSpecErr{{"gadget", "", 5, `invalid duration "soon" (write it like 2s or 1m30s)`}},
		},
		{
			name: "bad durations in phases are all reported at their lines",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A, B], transition: [T, U]}
    failure: {rollback: true}
    create: {to: A}
    actions:
      - {name: go, from: [A], via: [{state: T, duration: 3 secs}], to: B}
      - name: back
        from: [B]
        via:
          - state: U
            duration: -2s
        to: A
`,
			want: []wantSpecErr{
				{"gadget", "", 8, `invalid duration "3 secs"`},
				{"gadget", "", 13, `negative duration "-2s"`},
			},
		},
		{
			name: "wrong type",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: A}
    create: {to: A}
`,
			want: []wantSpecErr{{"gadget", "states.static", 4, "must be a list (write [a, b] or one `- item` per line), not \"A\""}},
		},
		{
			name: "missing basics",
			spec: `kinds:
  - description: nothing else
`,
			want: []wantSpecErr{
				{"", "name", 2, "missing kind name"},
				{"", "collection", 2, "missing collection"},
				{"", "states.static", 2, "at least one static state"},
				{"", "create.to", 2, "action \"create\" needs a `to` static state"},
			},
		},
		{
			name: "state groups and initial",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states:
      static: [A]
      transition: [T]
      final: [Z]
      error: [T]
    initial: T
    create: {to: A}
`,
			want: []wantSpecErr{
				// Z is static by being final; T cannot be static and transition.
				{"gadget", "states.error[0]", 8, `"T" is a transition state`},
				{"gadget", "initial", 9, `"T" is a transition state`},
				// The create action starts from the initial state.
				{"gadget", "create.from[0]", 10, `"T" is a transition state`},
			},
		},
		{
			name: "hold in a final state, continued from elsewhere",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A, H, Z], transition: [T], final: [Z]}
    failure: {to: Z}
    hold: Z
    create: {via: [T], to: A}
    actions:
      - {name: go, from: [A, H], continues_create: true}
      - {name: again, from: [H], to: A, continues_create: true}
      - {name: end, from: [A], to: Z}
`,
			want: []wantSpecErr{
				{"gadget", "hold", 6, `the hold state "Z" must be an ordinary static state`},
				{"gadget", "actions[0].from", 9, "starts only from the hold state: write `from: [Z]`"},
				{"gadget", "actions[1]", 10, "runs the create's phases to the create's `to`: leave out its `via` and `to`"},
				{"gadget", "actions[1].from", 10, "starts only from the hold state: write `from: [Z]`"},
			},
		},
		{
			name: "hold with no way on",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A, H]}
    hold: H
    create: {to: A}
    actions:
      - {name: drop, from: [H], to: A}
`,
			want: []wantSpecErr{{"gadget", "hold", 5, "creates held in \"H\" have no way on: give an action `continues_create: true`"}},
		},
		{
			name: "continues a create that cannot be held",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A, B], transition: [T]}
    failure: {to: B}
    create: {via: [T], to: A}
    actions:
      - {name: go, from: [B], continues_create: true}
`,
			want: []wantSpecErr{{"gadget", "actions[0].continues_create", 8, "the kind has no `hold` state for creates to wait in"}},
		},
		{
			name: "actors",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A, B], transition: [T]}
    failure: {to: A}
    create: {to: A}
    actions:
      - name: go
        actor: robot
        from: [A]
        via:
          - {state: T, actor: ghost}
        to: B
`,
			want: []wantSpecErr{
				{"gadget", "actions[0].actor", 9, `unknown actor "robot"; actors are user, system, timer, crm, controller`},
				{"gadget", "actions[0].via[0].actor", 12, `unknown actor "ghost"`},
			},
		},
		{
			name: "failure rules",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A, B, C], transition: [T]}
    create: {to: A}
    actions:
      - name: both
        from: [A]
        via: [T]
        to: B
        failure: {rollback: true, to: A}
      - name: none
        from: [A]
        via: [T]
        to: C
        failure: {}
      - name: unruled
        from: [B]
        via: [T]
        to: A
      - name: fatal
        from: [C]
        via: [T]
        to: A
        failure: {to: A, fatal: NOWHERE}
`,
			want: []wantSpecErr{
				{"gadget", "actions[0].failure", 11, "either rolls back or goes to a state, not both"},
				{"gadget", "actions[1].failure", 16, "a failure needs `rollback: true`, `retry: true` or a `to` state"},
				{"gadget", "actions[2].failure", 17, "action \"unruled\" passes through transition states, so it can fail, but neither it nor the kind says what a failure does: give the kind `failure: {rollback: true}`"},
				{"gadget", "actions[3].failure.fatal", 25, `unknown state "NOWHERE"`},
			},
		},
		{
			name: "create from nothing cannot roll back",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A], transition: [T]}
    failure: {rollback: true}
    create:
      via: [T]
      to: A
  - name: other
    collection: others
    states: {static: [A], transition: [T]}
    create:
      via: [T]
      to: A
      failure: {rollback: true}
`,
			want: []wantSpecErr{
				// create.failure is not written: the error points into the create mapping.
				{"gadget", "create.failure", 7, "the create action starts from nothing, so the kind's `failure: {rollback: true}` cannot apply to it: give the create `failure: {to: <static state>}`"},
				{"other", "create.failure", 15, "the create action starts from nothing, so its failure cannot roll back: give the create `failure: {to: <static state>}`"},
			},
		},
		{
			name: "action shapes",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A, B]}
    create: {to: A, returns: true}
    actions:
      - {name: nowhere, to: B}
      - {name: both, from: [A], to: B, returns: true}
      - {name: anyret, from_any: true, returns: true}
      - {name: stay, from: [A]}
      - {from: [A], to: B}
`,
			want: []wantSpecErr{
				{"gadget", "create", 5, "both returns and names a `to` state"},
				{"gadget", "actions[0].from", 7, `action "nowhere" has no ` + "`from`"},
				{"gadget", "actions[1]", 8, `action "both" both returns and names a ` + "`to`"},
				{"gadget", "actions[2]", 9, `action "anyret" returns but may start from transition states`},
				{"gadget", "actions[3].to", 10, `action "stay" needs a ` + "`to`"},
				{"gadget", "actions[4].name", 11, "missing action name"},
			},
		},
		{
			name: "create cannot return",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A]}
    initial: A
    create: {returns: true}
`,
			want: []wantSpecErr{{"gadget", "create", 6, "a create action cannot return to where it started"}},
		},
		{
			name: "timers and delays",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A, B, C]}
    create: {to: A}
    actions:
      - {name: soon, from: [A], to: B, after: 5s}
      - {name: at, actor: system, from: [B], to: C, at: due}
      - {name: tick, actor: timer, from: [C], to: A}
`,
			want: []wantSpecErr{
				{"gadget", "actions[0].after", 7, "only system actions start automatically after a delay"},
				{"gadget", "actions[1].at", 8, "only timer actions start at a time"},
				{"gadget", "actions[2].at", 9, "timer action \"tick\" needs `at`"},
			},
		},
		{
			name: "deletion and update",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A]}
    create: {to: A}
    deletion:
      shred: [create]
      destroy: [vanish]
    update: upgrade
`,
			want: []wantSpecErr{
				{"gadget", "deletion.destroy[0]", 8, `unknown action "vanish"`},
				{"gadget", "deletion.shred", 7, `unknown deletion mode "shred"`},
				{"gadget", "update", 9, `unknown action "upgrade"`},
			},
		},
		{
			name: "item names",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A]}
    create: {to: A}
    fields:
      - {name: size, type: integer, item_name: sizes}
      - {name: parts, type: list, item_name: colour, items: {type: object, fields: [{name: bits, type: list, item_name: bit}]}}
      - {name: colour, type: string}
      - {name: wheels, type: list, item_name: wheel}
      - {name: tyres, type: list, item_name: wheel}
      - {name: bolts, type: list, item_name: bolt}
`,
			want: []wantSpecErr{
				{"gadget", "fields[0].item_name", 7, "only lists name their items; size is a integer"},
				{"gadget", "fields[1].items.fields[0].item_name", 8, "only a kind's own list fields name their items, not nested ones"},
				{"gadget", "fields[1].item_name", 8, `item name "colour" is taken by another field`},
				{"gadget", "fields[3].item_name", 10, `item name "wheel" is taken by another field`},
				{"gadget", "fields[4].item_name", 11, `item name "wheel" is taken by another field`},
			},
		},
		{
			name: "empty file",
			spec: "",
			want: []wantSpecErr{{"", "", 0, "empty spec file"}},
		},
		{
			name: "no kinds",
			spec: "kinds: []\n",
			want: []wantSpecErr{{"", "kinds", 0, "no kinds"}},
		},
		{
			name: "kinds is not a list",
			spec: "kinds: 3\n",
			want: []wantSpecErr{{"", "kinds", 1, "`kinds` must be a list of kinds"}},
		},
		{
			name: "fields",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A]}
    create: {to: A}
    fields:
      - {name: size, type: integer, min: 5, max: 1}
      - {name: size, type: blob}
      - {name: when, type: string, after: then}
      - {name: colour, type: bool, enum: [red]}
      - {name: count, type: integer, default: many}
      - {type: string}
`,
			want: []wantSpecErr{
				{"gadget", "fields[0].min", 7, "min 5 is above max 1"},
				{"gadget", "fields[1].name", 8, `duplicate field "size"`},
				{"gadget", "fields[1].type", 8, `unknown type "blob"`},
				{"gadget", "fields[2].after", 9, "only time fields can be after another"},
				{"gadget", "fields[2].after", 9, `"then" is not a time field`},
				{"gadget", "fields[3].enum", 10, "enum lists string values"},
				{"gadget", "fields[4].default", 11, "default does not match the field: must be a number"},
				{"gadget", "fields[5].name", 12, "missing field name"},
			},
		},
		{
			name: "relations of one kind",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    parent: {kind: box, delete: explode}
    states: {static: [A, B]}
    create: {to: A}
    actions:
      - {name: go, from: [A], to: B}
    children:
      - {kind: part}
      - {kind: part, each: nothing}
    propagate:
      - {to: {children: part}}
      - {start: fly, land: [B, C], to: {children: part, parent: true}, remove: true, abort: true}
      - {land: B, to: {children: part}}
      - {land: B, to: {children: part}, run: go, wait: true, follow: true}
    guards:
      - {states: []}
      - {link: nowhere, states: [A]}
    derive: {function: nobody.knows}
    invariants: [nobody.cares]
`,
			want: []wantSpecErr{
				{"gadget", "propagate[0]", 13, "a propagation needs `start` (actions) or `land` (states)"},
				{"gadget", "propagate[1]", 14, "a propagation fires on `start` or on `land`, not both"},
				{"gadget", "propagate[1].start[0]", 14, `unknown action "fly"`},
				{"gadget", "propagate[1].land[1]", 14, `"C" is not a static state of gadget`},
				{"gadget", "propagate[1].to", 14, "pick exactly one of `children: <kind>`, `descendants: <kind>`, `parent: true` or `linked: {kind, field}`"},
				{"gadget", "propagate[1]", 14, `a propagation runs an action, removes or aborts: pick one`},
				{"gadget", "propagate[2].run", 15, "a propagation on a landing needs `run: <action>` (or remove/abort)"},
				{"gadget", "propagate[3]", 16, `wait and follow are opposite: the originator waits for them, or they follow it`},
				{"gadget", "propagate[3]", 16, "only a propagation on `start` can wait or follow"},
				{"gadget", "guards[0]", 18, "a guard looks at an `ancestor: <kind>` or a `link: <field>`, one of them"},
				{"gadget", "guards[0].in", 18, "a guard needs `in:`, the states the object must be in"},
				{"gadget", "guards[1].link", 19, `"nowhere" is not one of the kind's links`},
				{"gadget", "children[0].name", 10, "a single child needs a `name` (it is named <parent>-<name>), or `each: <list field>`"},
				{"gadget", "children[1].each", 11, `"nothing" is not a declared list field of gadget`},
				{"gadget", "derive.function", 20, `unknown derive function "nobody.knows"`},
				{"gadget", "derive.children", 20, "name the child kind whose objects feed the derivations: `children: <kind>`"},
				{"gadget", "invariants[0]", 21, `unknown invariant "nobody.cares"`},
				{"gadget", "parent.delete", 4, `unknown delete policy "explode"; policies are refuse, cascade, detach`},
			},
		},
		{
			name: "a link with an unknown delete policy",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A]}
    create: {to: A}
    fields:
      - {name: machine_id, type: string}
    links:
      - {field: machine_id, kind: machine, set_by: [create], delete: explode}
`,
			want: []wantSpecErr{
				{"gadget", "links[0].delete", 9, `unknown link delete policy "explode"; policies are clear`},
			},
		},
		{
			name: "a refusing link from objects that never go nor let go",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A]}
    create: {to: A}
    fields:
      - {name: machine_id, type: string, required: true}
      - {name: image_id, type: string, immutable: true}
      - {name: disk_id, type: string}
    links:
      - {field: machine_id, kind: machine, set_by: [create], delete: refuse}
      - field: image_id
        kind: image
        set_by: [create]
        delete: refuse
      - {field: disk_id, kind: disk, set_by: [create], delete: refuse}
`,
			want: []wantSpecErr{
				{"gadget", "links[0].delete", 11, "`delete: refuse` keeps a linked machine from being deleted while a gadget's machine_id names it, but no " +
					"action of gadget lands in a `gone` state (a `deletion:` of its own included), no action clears machine_id and a " +
					"patch cannot (it is required), so the machine could never be deleted: give gadget a deletion mode naming an " +
					"action into a `gone` state (`deletion: {destroy: [ACTION]}`) or an action that clears the link (`cleared_by: " +
					"[ACTION]`), or leave out `delete: refuse` (removing the machine then clears machine_id)"},
				{"gadget", "links[1].delete", 15, "`delete: refuse` keeps a linked image from being deleted while a gadget's image_id names it"},
			},
		},
		{
			name: "a refusing parent over children that cannot be deleted",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    parent: {kind: machine, delete: refuse}
    states: {static: [A]}
    create: {to: A}
`,
			want: []wantSpecErr{
				{"gadget", "parent.delete", 4, "`delete: refuse` keeps a machine from being deleted while it holds gadget objects, but no " +
					"action of gadget lands in a `gone` state (a `deletion:` of its own included), so they can never be removed and the " +
					"machine could never be deleted: give gadget a deletion mode naming an action into a `gone` state (`deletion: " +
					"{destroy: [ACTION]}`), or write `delete: cascade` (they go with the machine) or `delete: detach` (they stay, " +
					"without a parent)"},
			},
		},
		{
			name: "a limited propagation that no landing frees",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A, B]}
    create: {to: A}
    actions:
      - {name: go, from: [A], to: B}
      - {name: back, from: [B], to: A}
      - {name: again, from: [B], to: B}
    propagate:
      - {start: go, to: {children: part}, limit: {outer: csp, inner: region, default: {inner: 1, per_inner: 1}}}
      - {start: back, to: {children: part}, follow: true, limit: {outer: csp, inner: region, default: {inner: 1, per_inner: 1}}}
      - {start: again, to: {children: part}, wait: true, limit: {outer: csp, default: {inner: 1, per_inner: 1}}}
`,
			want: []wantSpecErr{
				{"gadget", "propagate[0].limit", 11, "a limit on a propagation needs `wait: true`: a queued object starts when a running one lands and tells the gadget's operation it waits for"},
				{"gadget", "propagate[1].limit", 12, "a limit on a propagation needs `wait: true`: a queued object starts when a running one lands and tells the gadget's operation it waits for"},
				{"gadget", "propagate[2].limit", 13, "a limit needs `outer` and `inner` spec fields"},
			},
		},
		{
			name: "two limits on one operation",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A, B]}
    create: {to: A}
    actions:
      - {name: go, from: [A], to: B}
    children:
      - {kind: part, name: p, wait: true, limit: {outer: csp, inner: region, default: {inner: 1, per_inner: 1}}}
      - {kind: part, name: q, wait: true, limit: {outer: csp, inner: region, default: {inner: 2, per_inner: 2}}}
    propagate:
      - {start: go, to: {children: part}, wait: true, limit: {outer: csp, inner: region, default: {inner: 1, per_inner: 1}}}
      - {start: go, to: {children: part}, wait: true, run: go, limit: {outer: csp, inner: region, default: {inner: 1, per_inner: 1}}}
`,
			want: []wantSpecErr{
				{"gadget", "propagate[1].limit", 13, "propagate[0] already limits go: an operation runs under one limit, so give the related objects one propagation with a limit"},
				{"gadget", "children[1].limit", 10, "children[0] already has a limit: the gadget's create runs under one limit, so give one child declaration a limit"},
			},
		},
		{
			name: "limited children that no landing frees",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A]}
    create: {to: A}
    children:
      - {kind: part, name: p, limit: {outer: csp, inner: region, default: {inner: 1, per_inner: 1}}}
  - name: widget
    collection: widgets
    states: {static: [A]}
    create: {to: A}
    children:
      - {kind: part, name: q, wait: true, limit: {inner: region, default: {inner: 1, per_inner: 1}}}
`,
			want: []wantSpecErr{
				{"gadget", "children[0].limit", 7, "a limit on children needs `wait: true`: the gadget's create holds their queue until every one has landed"},
				{"widget", "children[0].limit", 13, "a limit needs `outer` and `inner` spec fields"},
			},
		},
		{
			name: "limits that let nothing run",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A, B]}
    create: {to: A}
    actions:
      - {name: go, from: [A], to: B}
    propagate:
      - {start: go, to: {children: part}, wait: true, limit: {outer: csp, inner: region}}
    children:
      - kind: part
        name: q
        wait: true
        limit:
          outer: csp
          inner: region
          groups:
            aws: {inner: 2, per_inner: 0}
            gcp: {inner: 1, per_inner: 1}
          default: {inner: 1, per_inner: 5}
`,
			want: []wantSpecErr{
				{"gadget", "propagate[0].limit.default", 9, "`inner` and `per_inner` must be at least 1: with 0 and 0 none of the objects would ever run"},
				{"gadget", "children[0].limit.groups.aws", 18, "`inner` and `per_inner` must be at least 1: with 2 and 0 none of the objects would ever run"},
			},
		},
	}
	tests = append(tests, malformedCase{
		name: "timer where and child leads",
		spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A, B]}
    create: {to: A}
    fields:
      - {name: at, type: time}
      - {name: label, type: string}
    actions:
      - {name: go, from: [A], to: B, where: {label: x}}
      - {name: tick, actor: timer, at: at, from: [A], to: B, where: {colour: red}}
    children:
      - {kind: part, name: p, before: 1h}
      - {kind: part, name: q, copy: {time: label}, before: 1h, not_before: label}
`,
		want: []wantSpecErr{
			{"gadget", "actions[0].where", 10, "`where` limits an action that starts by itself (`at` or `after`) to some objects; action \"go\" starts only when asked"},
			{"gadget", "actions[1].where.colour", 11, `"colour" is not a field of gadget`},
			{"gadget", "children[0]", 13, "`before`, `not_before` and `moved` shape the time fields a child copies from its parent, but this declaration has no `copy`"},
			{"gadget", "children[1].copy.time", 14, `"label" is not a time field of gadget`},
			{"gadget", "children[1].not_before", 14, `"label" is not a time field of gadget`},
		},
	})
	// Collections the API cannot route: one kind each, refused at its collection line.
	for _, c := range []struct{ collection, want string }{
		{"kinds", "collection \"kinds\" is a route of the API itself (/v1/kinds): choose another URL path segment, such as kind_objects"},
		{"sim", "is a route of the API itself (/v1/sim)"},
		{"a/b", "collection \"a/b\" cannot be routed: it is one segment of the URL /v1/{collection}/{id}, and \"/\" splits or ends it; use letters, digits, - and _ (such as \"a_b\")"},
		{"a?b", "\"?\" splits or ends it"},
		{"a;b", "\";\" splits or ends it"},
		{"a b", "(such as \"a_b\")"},
		{"..", "is a dot segment"},
	} {
		tests = append(tests, malformedCase{name: "collection " + c.collection,
			spec: fmt.Sprintf("kinds:\n  - name: gadget\n    collection: %q\n    states: {static: [A]}\n    create: {to: A}\n", c.collection),
			want: []wantSpecErr{{"gadget", "collection", 3, c.want}}})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kinds, err := Parse("bad.yaml", []byte(tt.spec))
			if kinds != nil {
				t.Errorf("Parse returned kinds with an error")
			}
			// Deletion modes are a map: sort for a stable comparison.
			if tt.name == "deletion and update" {
				if es, ok := err.(SpecErrors); ok {
					slices.SortStableFunc(es, func(a, b *SpecError) int { return strings.Compare(a.Field, b.Field) })
				}
			}
			assertSpecErrors(t, "bad.yaml", err, tt.want)
		})
	}
}

func TestParseSyntaxError(t *testing.T) {
	_, err := Parse("bad.yaml", []byte("kinds:\n  - name: a\n\tcollection: b\n"))
	es := specErrors(t, err)
	// The line is yaml.v3's (it reports where the broken mapping starts).
	if len(es) != 1 || es[0].File != "bad.yaml" || es[0].Line != 2 || !strings.Contains(es[0].Msg, "found a tab character") {
		t.Errorf("Parse = %v, want one located syntax error", err)
	}
	if want := "bad.yaml:2: found a tab character"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Error() = %q, want prefix %q", err, want)
	}
}

func TestRegistryAddErrors(t *testing.T) {
	tests := []struct {
		name string
		spec string
		want []wantSpecErr
	}{
		{
			name: "duplicate kind name and collection",
			spec: `kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A]}
    create: {to: A}
  - name: gadget
    collection: gadgets
    states: {static: [A]}
    create: {to: A}
`,
			want: []wantSpecErr{
				{"gadget", "name", 6, "duplicate kind name: gadget is already a kind (user.yaml); rename this one"},
				{"gadget", "collection", 7, `collection "gadgets" is already used by kind gadget; choose another`},
			},
		},
		{
			name: "clash with a built-in kind",
			spec: `kinds:
  - name: machine
    collection: robots
    states: {static: [A]}
    create: {to: A}
`,
			want: []wantSpecErr{{"machine", "name", 2, "duplicate kind name: machine is already a kind (specs/openvcloud.yaml)"}},
		},
		{
			name: "parents",
			spec: `kinds:
  - name: orphan
    collection: orphans
    parent: {kind: nobody}
    states: {static: [A]}
    create: {to: A}
  - name: part
    collection: parts
    parent: {kind: machine, states: [RUNNING, STOPPING]}
    states: {static: [A, B]}
    create: {to: A}
    actions:
      - {name: go, from: [A], to: B, parent_states: [FLYING]}
`,
			want: []wantSpecErr{
				{"orphan", "parent.kind", 4, `unknown parent kind "nobody"`},
				{"part", "parent.in[1]", 9, `"STOPPING" is not a static state of parent kind machine`},
				{"part", "actions[0].parent_in[0]", 13, `"FLYING" is not a static state of parent kind machine`},
			},
		},
		{
			name: "a moved action the child kind lacks",
			spec: `kinds:
  - name: hen
    collection: hens
    states: {static: [A]}
    create: {to: A}
    fields:
      - {name: due, type: time}
    children:
      - {kind: egg, name: e, copy: {due: due}, moved: hatch}
  - name: egg
    collection: eggs
    parent: {kind: hen}
    states: {static: [A]}
    create: {to: A}
    actions:
      - {name: hide, from: [A], to: A}
`,
			want: []wantSpecErr{{"hen", "children[0].moved", 9, `unknown action "hatch" of egg`}},
		},
		{
			name: "parent cycle",
			spec: `kinds:
  - name: hen
    collection: hens
    parent: {kind: egg}
    states: {static: [A]}
    create: {to: A}
  - name: egg
    collection: eggs
    parent: {kind: hen}
    states: {static: [A]}
    create: {to: A}
`,
			want: []wantSpecErr{
				{"hen", "parent.kind", 4, "parents form a cycle: hen → egg → hen"},
				{"egg", "parent.kind", 9, "parents form a cycle: egg → hen → egg"},
			},
		},
		{
			name: "relations naming unknown kinds and states",
			spec: `kinds:
  - name: rack
    collection: racks
    states: {static: [UP, DOWN]}
    create: {to: UP}
    actions:
      - {name: down, with: spook, from: [UP], to: DOWN}
    children:
      - {kind: ghost, name: g}
      - {kind: server, name: s}
    propagate:
      - {start: down, to: {children: ghost}}
      - {start: down, to: {children: blade}, states: [FLYING], run: halt}
      - {land: DOWN, to: {linked: {kind: blade, field: rack_id}}, run: vanish}
  - name: blade
    collection: blades
    parent: {kind: rack}
    states: {static: [ON, OFF]}
    create: {to: ON}
    actions:
      - {name: off, from: [ON], to: OFF}
    guards:
      - {ancestor: server, states: [ON]}
      - {ancestor: rack, states: [SIDEWAYS]}
    links:
      - {field: peer_id, kind: nobody}
  - name: server
    collection: servers
    states: {static: [ON]}
    create: {to: ON}
`,
			want: []wantSpecErr{
				{"rack", "children[0].kind", 9, `unknown kind "ghost"`},
				{"rack", "children[1].kind", 10, "server objects are not children of rack"},
				{"rack", "propagate[0].to", 12, `unknown kind "ghost"`},
				{"rack", "propagate[1].in[0]", 13, `"FLYING" is not a state of blade`},
				{"rack", "propagate[1].run", 13, `blade has no action "halt"`},
				{"rack", "propagate[2].run", 14, `blade has no action "vanish"`},
				{"rack", "actions[0].with", 7, `unknown kind "spook"`},
				{"blade", "guards[0].ancestor", 23, "server is not an ancestor of blade"},
				{"blade", "guards[1].in[0]", 24, `"SIDEWAYS" is not a state of rack`},
				{"blade", "links[0].kind", 26, `unknown kind "nobody"`},
			},
		},
		{
			name: "limits grouping by fields the related kind does not have",
			spec: `kinds:
  - name: fleet
    collection: fleets
    states: {static: [UP, DOWN]}
    create: {to: UP}
    actions:
      - {name: down, from: [UP], to: DOWN}
    children:
      - {kind: ship, name: s, wait: true, limit: {outer: cps, inner: region, default: {inner: 1, per_inner: 1}}}
    propagate:
      - {start: down, to: {children: ship}, wait: true, limit: {outer: csp, inner: zone, default: {inner: 1, per_inner: 1}}}
  - name: ship
    collection: ships
    parent: {kind: fleet}
    states: {static: [UP, DOWN]}
    create: {to: UP}
    actions:
      - {name: down, from: [UP], to: DOWN}
    fields:
      - {name: csp, type: string}
      - {name: region, type: string}
`,
			want: []wantSpecErr{
				{"fleet", "children[0].limit.outer", 9, `"cps" is not a spec field of ship (did you mean "csp"?)`},
				{"fleet", "propagate[0].limit.inner", 11, `"zone" is not a spec field of ship`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := loadBuiltin()
			if err != nil {
				t.Fatal(err)
			}
			before := r.Names()
			kinds, err := Parse("user.yaml", []byte(tt.spec))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			assertSpecErrors(t, "user.yaml", r.Add(kinds...), tt.want)
			if got := r.Names(); !slices.Equal(got, before) {
				t.Errorf("Add with errors changed the registry: %v", got)
			}
		})
	}
}

func TestLoadFile(t *testing.T) {
	kinds, err := LoadFile(filepath.Join("testdata", "specs", "printer.yaml"))
	if err != nil {
		t.Fatalf("LoadFile: %v", err)
	}
	if len(kinds) != 2 || kinds[0].Name != "printer" || kinds[1].Name != "print_job" {
		t.Fatalf("LoadFile = %v", kinds)
	}
	r := NewRegistry()
	if err := r.Add(kinds...); err != nil {
		t.Fatalf("Add: %v", err)
	}
	job, err := r.Kind("print_job")
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := r.ByCollection("printers"); !ok || k != kinds[0] {
		t.Errorf("ByCollection(printers) = %v, %v", k, ok)
	}
	route, err := job.Route("QUEUED", "", "DONE", false)
	if err != nil || !slices.Equal(route.Actions(), []string{"print"}) {
		t.Errorf("Route(QUEUED, DONE) = %v, %v", route.Actions(), err)
	}
	if got := job.StaticStates(); !slices.Equal(got, []string{"QUEUED", "DONE", "JAMMED"}) {
		t.Errorf("StaticStates() = %v", got)
	}

	_, err = LoadFile(filepath.Join("testdata", "specs", "missing.yaml"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "read kinds file") {
		t.Errorf("LoadFile(missing) = %v, want a wrapped not-exist error", err)
	}

	file := filepath.Join("testdata", "specs", "broken.yaml")
	_, err = LoadFile(file)
	assertSpecErrors(t, file, err, []wantSpecErr{
		{"print_job", "actions[1].from[1]", 13, `unknown state "LOST"`},
		{"print_job", "actions[1].to", 14, `"PRINTING" is a transition state; a static state is needed here`},
	})
}

// TestBuiltinSpecsLoad checks every embedded spec file parses on its own, so a mistake in
// one names that file (Builtin would panic).
func TestBuiltinSpecsLoad(t *testing.T) {
	entries, err := builtinSpecs.ReadDir("specs")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, e := range entries {
		data, err := builtinSpecs.ReadFile("specs/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		kinds, err := Parse(e.Name(), data)
		if err != nil {
			t.Errorf("Parse(%s): %v", e.Name(), err)
		}
		for _, k := range kinds {
			if !strings.HasPrefix(e.Name(), k.Family) {
				t.Errorf("kind %s of family %s is in %s", k.Name, k.Family, e.Name())
			}
		}
		total += len(kinds)
	}
	if total != len(builtin.Names()) {
		t.Errorf("spec files hold %d kinds, Builtin %d", total, len(builtin.Names()))
	}
}

func TestPhaseShorthand(t *testing.T) {
	k := mustParse(t, `
kinds:
  - name: gadget
    collection: gadgets
    states: {static: [A, B], transition: [T, U]}
    failure: {to: A}
    create: {to: A}
    actions:
      - name: go
        from: [A]
        via: [T, {state: U, actor: crm, duration: 1m30s, skippable: true}]
        to: B
`)
	a, _ := k.Action("go")
	want := []Phase{{State: "T"}, {State: "U", Actor: ActorCRM, Duration: Duration(90e9), Skippable: true}}
	if !slices.Equal(a.Via, want) {
		t.Errorf("via = %+v, want %+v", a.Via, want)
	}
}

func TestLocatorLine(t *testing.T) {
	// The locator falls back to the nearest node it can find.
	l := locator{file: "f", index: 0}
	if got := l.line("states"); got != 0 {
		t.Errorf("line without a document = %d, want 0", got)
	}
	if got := kindAtLine(nil, 3); got != "" {
		t.Errorf("kindAtLine(nil) = %q", got)
	}
	if got, msg := splitLine("line x: y"); got != 0 || msg != "line x: y" {
		t.Errorf("splitLine = %d, %q", got, msg)
	}
	if got, msg := splitLine("line 3 and no colon"); got != 0 || msg != "line 3 and no colon" {
		t.Errorf("splitLine = %d, %q", got, msg)
	}
}
