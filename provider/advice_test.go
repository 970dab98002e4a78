package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// adviceKindsFile holds the user kinds the advice table test runs beside the built-in ones.
var adviceKindsFile = filepath.Join("testdata", "TestAdviceCoversRecoveryTable", "kinds.yaml")

// TestAdviceCoversRecoveryTable runs advise on every situation an object of every kind can be
// in (each state, each status asked, each event: situations), for every family and a user
// kind file, and checks what the advice names against the kind's spec: only user actions the
// kind has (a repair allowed from the state, a route that leads where it says), never another
// kind's action, every action it names in its text. The rows each family reaches are the
// recovery table's, as the specs decide.
func TestAdviceCoversRecoveryTable(t *testing.T) {
	reg := lifecycle.NewRegistry()
	if err := reg.Add(builtinKinds.Kinds()...); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.LoadFiles(adviceKindsFile); err != nil {
		t.Fatal(err)
	}
	configs := append(typedKinds(), dataOnlyKinds()...)
	var user []*lifecycle.Kind
	for _, k := range reg.Kinds() {
		if k.Family == "advice_test" {
			user = append(user, k)
		}
	}
	userReg := lifecycle.NewRegistry()
	if err := userReg.Add(user...); err != nil {
		t.Fatal(err)
	}
	configs = append(configs, configsOf(userReg, nil, false)...)

	// Every action name of every kind: advice about one kind names none of another's.
	var every []string
	for _, k := range reg.Kinds() {
		for _, a := range k.AllActions() {
			every = appendNew(every, a.Name)
		}
	}
	want := map[row][]string{
		rowNoRoute:           {"openvcloud", "savanna", "tumblebug"},
		rowUnreachable:       {"tumblebug"}, // an MCI asked back into Holding
		rowImmutable:         {"advice_test", "blazar", "mobiledgex", "openvcloud", "savanna"},
		rowFieldNoReturn:     {"blazar"},
		rowFieldReturn:       {"advice_test", "mobiledgex"},
		rowErrorReplaced:     {"savanna", "tumblebug"},
		rowErrorHeld:         {"advice_test", "mobiledgex"},
		rowErrorRoute:        {"mobiledgex"},
		rowTimeEnded:         {"blazar"},
		rowTimeError:         {"blazar"},
		rowMembersPartly:     {"tumblebug"},
		rowMembersAll:        {"tumblebug"},
		rowCreateFailed:      {"advice_test", "blazar", "mobiledgex", "openvcloud", "savanna", "tumblebug"},
		rowCreateInterrupted: {"advice_test", "blazar", "mobiledgex", "openvcloud", "savanna", "tumblebug"},
		rowStuck:             {"advice_test", "blazar", "mobiledgex", "openvcloud", "savanna", "tumblebug"},
		rowLiveChildren:      {"advice_test", "mobiledgex"},
		rowBlocking:          {"advice_test", "mobiledgex", "openvcloud"},
		rowInUse:             {"savanna"},
	}
	got := map[row][]string{}
	for _, c := range configs {
		k, err := reg.Kind(c.kind)
		if err != nil {
			t.Fatal(err)
		}
		own := map[string]bool{}
		for _, a := range k.AllActions() {
			own[a.Name] = true
		}
		for _, s := range situations(reg, c, k) {
			a := advise(s)
			if a.row == rowNone {
				continue
			}
			name := fmt.Sprintf("%s %s (event %d, state %q, asked %q)", k.Name, rowTitles[a.row], s.event, s.state, s.asked)
			got[a.row] = appendNew(got[a.row], k.Family)
			if a.does == "" || a.run == "" {
				t.Errorf("%s: the advice has no does or run for the guide's table: %+v", name, a)
			}
			for _, act := range a.actions {
				if x, ok := k.Action(act); !ok || !x.ByUser() {
					t.Errorf("%s: names %q, which is not a user action of %s", name, act, k.Name)
				}
				if !strings.Contains(a.text, act) {
					t.Errorf("%s: names %q but its text does not: %q", name, act, a.text)
				}
			}
			switch a.row {
			case rowErrorHeld, rowCreateFailed:
				for _, act := range a.actions {
					if _, err := k.Check(s.state, act, false); err != nil {
						t.Errorf("%s: the repair %q does not run from %s: %v", name, act, s.state, err)
					}
				}
			case rowErrorRoute:
				route, err := k.Route(s.state, "", s.asked, false)
				if err != nil || !slices.Equal(route.Actions(), a.actions) {
					t.Errorf("%s: route %v, but the spec's route is %v (%v)", name, a.actions, route.Actions(), err)
				}
			}
			for _, other := range every {
				if own[other] {
					continue
				}
				for _, form := range []string{"`" + other + "`", `"` + other + `"`, "runs " + other + " ", "runs " + other + "."} {
					if strings.Contains(a.text, form) || strings.Contains(a.run, form) {
						t.Errorf("%s: names %s, which %s does not have: %q", name, form, k.Name, a.text)
					}
				}
			}
		}
	}
	for r := rowNone + 1; r < rowCount; r++ {
		if rowTitles[r] == "" {
			t.Errorf("row %d has no title in the guide's table", r)
		}
		sort.Strings(got[r])
		if !slices.Equal(got[r], want[r]) {
			t.Errorf("%s: families in it = %v, want %v", rowTitles[r], got[r], want[r])
		}
	}
}

// TestRecoveryTableInGuide: the guide's template holds the recovery table advise gives, and
// the rendered guide shows it (make generate writes both; make docs-check fails when stale).
func TestRecoveryTableInGuide(t *testing.T) {
	path := filepath.Join("..", "templates", "guides", "state-machines.md.tmpl")
	tmpl, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := WithRecoveryTable(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if string(fresh) != string(tmpl) {
		t.Errorf("%s: the recovery table is stale: run make generate", path)
	}
	doc, err := os.ReadFile(filepath.Join("..", "docs", "guides", "state-machines.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), RecoveryTable()) {
		t.Errorf("docs/guides/state-machines.md does not show the recovery table: run make generate")
	}
	if n := strings.Count(RecoveryTable(), "\n"); n != int(rowCount)-1+2 {
		t.Errorf("the recovery table has %d lines, want a header, a rule and %d rows", n, rowCount-1)
	}
}

// TestAppliedView: the spec fields a refresh reads are the last applied values where a failed
// update left others and the update can run again (a fixed cloudlet, a ClusterInst in
// UpdateError), and the values asked for where it cannot yet (a cloudlet in UpdateError) or the
// field cannot change there (a lease's end_date in ERROR).
func TestAppliedView(t *testing.T) {
	unapplied := func(field string, was any) map[string]any {
		return map[string]any{"unapplied": map[string]any{"action": "update", "applied": map[string]any{field: was}}}
	}
	tests := []struct {
		name, kind, state, field string
		asked, was, want         any
		status                   map[string]any
	}{
		{name: "cloudlet fixed", kind: "cloudlet", state: "Ready", field: "version", asked: "2.0", was: "1.0", want: "1.0"},
		{name: "cloudlet in UpdateError", kind: "cloudlet", state: "UpdateError", field: "version", asked: "2.0", was: "1.0", want: "2.0"},
		{name: "cluster_inst in UpdateError", kind: "cluster_inst", state: "UpdateError", field: "num_nodes", asked: 5.0, was: 2.0, want: 2.0},
		{name: "lease in ERROR", kind: "lease", state: "ERROR", field: "end_date", asked: "2030-01-02T00:00:00Z", was: "2030-01-01T00:00:00Z",
			want: "2030-01-02T00:00:00Z"},
		{name: "a field absent before", kind: "cloudlet", state: "Ready", field: "location", asked: "berlin", was: nil, want: nil},
		{name: "no failed update", kind: "cloudlet", state: "Ready", field: "version", asked: "2.0", want: "2.0", status: map[string]any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := builtinKinds.Kind(tt.kind)
			if err != nil {
				t.Fatal(err)
			}
			status := tt.status
			if status == nil {
				status = unapplied(tt.field, tt.was)
			}
			o := &client.Object{Kind: tt.kind, State: tt.state, Static: true, Spec: map[string]any{tt.field: tt.asked}, Status: status}
			got := appliedView(k, o)
			if v := got.Spec[tt.field]; v != tt.want {
				t.Errorf("appliedView(%s in %s).Spec[%s] = %v, want %v", tt.kind, tt.state, tt.field, v, tt.want)
			}
			if o.Spec[tt.field] != tt.asked {
				t.Errorf("appliedView changed the object it was given: %v", o.Spec)
			}
		})
	}
}
