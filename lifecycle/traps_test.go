package lifecycle

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// checkSpec runs CheckFiles on one spec written to a file, returning its output.
func checkSpec(t *testing.T, spec string) (string, bool, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "kinds.yaml")
	if err := os.WriteFile(file, []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	ok := CheckFiles(&b, file)
	return b.String(), ok, file
}

// The traps a new user met writing a kind (issue 26): each is either unnecessary now or
// reported at its line with the fix.
func TestTraps(t *testing.T) {
	tests := []struct {
		name string
		spec string
		ok   bool
		// want are lines of the output, after the file name ("" file prefix added).
		want []string
	}{
		{
			name: "an error state need not be listed as static too",
			spec: `kinds:
  - name: widget
    collection: widgets
    states:
      static: [OFF, ON]
      transition: [STARTING]
      error: [FAILED]
    create: {via: [STARTING], to: ON, failure: {to: FAILED}}
    actions:
      - {name: stop, from: [ON, FAILED], to: OFF}
`,
			ok:   true,
			want: []string{": 1 kind OK (widget)"},
		},
		{
			name: "boolean is bool",
			spec: `kinds:
  - name: widget
    collection: widgets
    states: {static: [ON]}
    create: {to: ON}
    fields:
      - {name: big, type: boolean}
`,
			want: []string{`:7: error: kind "widget": fields[0].type: unknown type "boolean" (did you mean "bool"?); types are string, integer, number, bool, time, list, object`},
		},
		{
			name: "a count needs a list",
			spec: `kinds:
  - name: rack
    collection: racks
    states: {static: [UP]}
    create: {to: UP}
    fields:
      - {name: servers, type: integer}
    children:
      - {kind: server, name: s, count: servers}
  - name: server
    collection: servers
    parent: {kind: rack}
    states: {static: [ON]}
    create: {to: ON}
`,
			want: []string{":9: error: kind \"rack\": children[0].count: `count` makes that many children per item of a list, so it needs `each: <list field>`: for N children of one kind, declare a list field whose items have a `name` and an integer `count`"},
		},
		{
			name: "a create from nothing needs a failure state",
			spec: `kinds:
  - name: widget
    collection: widgets
    states: {static: [ON, FAILED], transition: [STARTING]}
    failure: {rollback: true}
    create: {via: [STARTING], to: ON}
`,
			want: []string{":6: error: kind \"widget\": create.failure: the create action starts from nothing, so the kind's `failure: {rollback: true}` cannot apply to it: give the create `failure: {to: <static state>}` (an error state, say), or give the kind an `initial:` state"},
		},
		{
			name: "group needs named items",
			spec: `kinds:
  - name: rack
    collection: racks
    states: {static: [UP]}
    create: {to: UP}
    fields:
      - name: shelves
        type: list
        items:
          type: object
          fields:
            - {name: count, type: integer}
    children:
      - {kind: server, each: shelves, count: count, group: shelf}
  - name: server
    collection: servers
    parent: {kind: rack}
    states: {static: [ON]}
    create: {to: ON}
`,
			want: []string{":14: error: kind \"rack\": children[0].group: `group` records which item a child came from by the item's `name`, but the items of shelves have no `name` field"},
		},
		{
			name: "unknown keys in the spec's words",
			spec: `kinds:
  - name: widget
    collection: widgets
    states: {static: [OFF, ON]}
    create: {to: OFF}
    actions:
      - {name: start, form: [OFF], to: ON}
`,
			want: []string{`:7: error: kind "widget": actions[0].form: unknown key "form" in an action (did you mean "from"?); its keys are name, description, from,`},
		},
		{
			name: "wrong types in the spec's words",
			spec: `kinds:
  - name: widget
    collection: widgets
    states: {static: [ON]}
    create: {to: ON, returns: sometimes}
    fields:
      - {name: n, type: integer, min: low}
`,
			want: []string{
				`:5: error: kind "widget": create.returns: must be true or false, not "sometimes"`,
				`:7: error: kind "widget": fields[0].min: must be a number, not "low"`,
			},
		},
		{
			name: "a misspelt state",
			spec: `kinds:
  - name: widget
    collection: widgets
    states: {static: [OFF, ON], transition: [STARTING]}
    failure: {rollback: true}
    create: {to: OFF}
    actions:
      - {name: start, from: [OFF], via: [STARTIN], to: ON}
`,
			want: []string{`:8: error: kind "widget": actions[0].via[0]: unknown state "STARTIN" (did you mean "STARTING"?)`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, ok, file := checkSpec(t, tt.spec)
			if ok != tt.ok {
				t.Errorf("CheckFiles = %v, want %v; output:\n%s", ok, tt.ok, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, file+w) {
					t.Errorf("output lacks %q:\n%s", file+w, out)
				}
			}
		})
	}
}

// The invalid-status hint lists only the states a user can ask for: not an error state only
// a failure reaches.
func TestRequestableStates(t *testing.T) {
	k := mustParse(t, `kinds:
  - name: widget
    collection: widgets
    states: {static: [OFF, ON], transition: [STARTING], error: [FAILED], gone: [GONE]}
    create: {via: [STARTING], to: ON, failure: {to: FAILED}}
    failure: {rollback: true}
    actions:
      - {name: stop, from: [ON, FAILED], via: [STARTING], to: OFF}
      - {name: drop, from: [OFF], to: GONE}
`)
	if got, want := k.RequestableStates(), []string{"OFF", "ON"}; !slices.Equal(got, want) {
		t.Errorf("RequestableStates() = %v, want %v", got, want)
	}
	if got, want := k.States.Static, []string{"OFF", "ON", "FAILED", "GONE"}; !slices.Equal(got, want) {
		t.Errorf("static states = %v, want %v (error and gone states are static)", got, want)
	}
}

// Renamed keys still load under their old names, with a warning naming the new one; the file
// means the same.
func TestDeprecatedKeys(t *testing.T) {
	old := `kinds:
  - name: dock
    collection: docks
    states: {static: [OPEN, SHUT]}
    create: {to: OPEN}
    actions:
      - {name: shut, from: [OPEN], to: SHUT}
      - {name: open, from: [SHUT], to: OPEN}
    propagate:
      - {land: SHUT, by: shut, to: {children: boat}, states: [MOORED], run: leave}
    derive: {children: boat, use: [{function: count_in, status: moored, in: [MOORED]}]}
  - name: boat
    collection: boats
    parent: {kind: dock, states: [OPEN]}
    states: {static: [AWAY, MOORED]}
    create: {to: AWAY}
    actions:
      - {name: moor, from: [AWAY], to: MOORED, parent_states: [OPEN]}
      - {name: leave, from: [MOORED], to: AWAY}
    guards:
      - {ancestor: dock, states: [OPEN], actions: [moor]}
`
	renamed := strings.NewReplacer("by: shut", "actions: shut", "states: [MOORED]", "in: [MOORED]",
		"states: [OPEN]", "in: [OPEN]", "parent_states:", "parent_in:").Replace(old)
	kOld, warns, err := ParseWarn("old.yaml", []byte(old))
	if err != nil {
		t.Fatal(err)
	}
	kNew, newWarns, err := ParseWarn("new.yaml", []byte(renamed))
	if err != nil {
		t.Fatal(err)
	}
	if len(newWarns) != 0 {
		t.Errorf("new names warn: %v", newWarns)
	}
	wantWarns := []string{
		`old.yaml:10: kind "dock": propagate[0].by: deprecated key "by": write "actions" instead`,
		`old.yaml:10: kind "dock": propagate[0].states: deprecated key "states": write "in" instead`,
		`old.yaml:14: kind "boat": parent.states: deprecated key "states": write "in" instead`,
		`old.yaml:18: kind "boat": actions[0].parent_states: deprecated key "parent_states": write "parent_in" instead`,
		`old.yaml:21: kind "boat": guards[0].states: deprecated key "states": write "in" instead`,
	}
	if len(warns) != len(wantWarns) {
		t.Errorf("warnings = %v, want %d", warns, len(wantWarns))
	}
	for i, w := range wantWarns {
		if i < len(warns) && !strings.HasPrefix(warns[i].Error(), w) {
			t.Errorf("warning %d = %q, want prefix %q", i, warns[i].Error(), w)
		}
	}
	for i := range kOld {
		a, b := kOld[i], kNew[i]
		if !slicesEqualJSON(t, a, b) {
			t.Errorf("kind %s reads differently under the old names", a.Name)
		}
	}
	// derive.from is the old name of derive.children.
	k, warns, err := ParseWarn("d.yaml", []byte(strings.Replace(old, "derive: {children: boat", "derive: {from: boat", 1)))
	if err != nil || len(warns) != 6 || k[0].Derive.From != "boat" {
		t.Errorf("derive.from: kinds %v, warnings %v, err %v", k, warns, err)
	}
	// Both names at once is an error.
	_, _, err = ParseWarn("both.yaml", []byte(strings.Replace(renamed, "in: [OPEN], actions: [moor]", "in: [OPEN], states: [OPEN], actions: [moor]", 1)))
	if err == nil || !strings.Contains(err.Error(), `"states" is the old name of "in", and both are set: keep "in" only`) {
		t.Errorf("both names: %v", err)
	}
}

func slicesEqualJSON(t *testing.T, a, b *Kind) bool {
	t.Helper()
	return jsonOf(t, a) == jsonOf(t, b)
}

func jsonOf(t *testing.T, k *Kind) string {
	t.Helper()
	b, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Each step of the kind tutorial loads as lifecyclesim check loads it.
func TestTutorialSteps(t *testing.T) {
	steps, _ := filepath.Glob("../examples/kinds/tutorial/step*.yaml")
	if len(steps) != 5 {
		t.Fatalf("tutorial steps = %v, want 5", steps)
	}
	for _, step := range steps {
		var b strings.Builder
		if !CheckFiles(&b, step) {
			t.Errorf("%s does not load:\n%s", step, b.String())
		}
		if strings.Contains(b.String(), "warning") {
			t.Errorf("%s warns:\n%s", step, b.String())
		}
	}
}
