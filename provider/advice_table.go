package provider

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

// The recovery table of the state-machine guide is generated from advise: each row is a
// situation, shown on an example among the built-in kinds, with what advise says Terraform
// does and what the user runs. internal/advicedoc writes it into the guide's template
// (make generate), and a test fails when the template is stale.

// rowTitles name each row's situation in words; the example is appended.
var rowTitles = map[row]string{
	rowNoRoute:           "A status no action leads to from the current state",
	rowUnreachable:       "A status not even a new object reaches",
	rowImmutable:         "An immutable field changed: a typed attribute, or a `lifecycle_object` `spec` key",
	rowFieldNoReturn:     "A field that changes only in states the object cannot return to",
	rowFieldReturn:       "A field that changes only in a state a route leads back to",
	rowErrorReplaced:     "An error state no action leads out of, after a failed create or a fatal failure",
	rowErrorHeld:         "An error state a repair action leaves, after a failed update",
	rowErrorRoute:        "An error state a route of user actions leaves, after a failed update it runs again",
	rowTimeEnded:         "A kind driven by time that a timer took to a state it stays in",
	rowTimeError:         "A kind driven by time in an error state",
	rowMembersPartly:     "An object made of members some of which failed, after a create or an update",
	rowMembersAll:        "An object made of members all of which failed at create",
	rowCreateFailed:      "A create that timed out or failed",
	rowCreateInterrupted: "A create interrupted with Ctrl-C while healthy, members included",
	rowStuck:             "A transition stuck past its due time",
	rowUndeletable:       "A kind with no deletion mode, destroyed",
	rowLiveChildren:      "A destroy of an object whose children refuse it (outside the configuration, or naming it by its ID written out)",
	rowBlocking:          "A change that needs a parent or an ancestor in other states",
	rowInUse:             "A destroy or replacement of an object others name in a link that refuses it (`delete: refuse`)",
}

// rowExamples are the built-in kinds each row is shown on, in order of preference (the first
// one that is in the situation).
var rowExamples = map[row][]string{
	rowNoRoute:           {"node"},
	rowImmutable:         {"cluster_inst"},
	rowFieldNoReturn:     {"lease"},
	rowFieldReturn:       {"lease", "cloudlet"},
	rowErrorReplaced:     {"cluster"},
	rowErrorHeld:         {"cloudlet"},
	rowErrorRoute:        {"cluster_inst", "app_inst"},
	rowTimeEnded:         {"lease"},
	rowTimeError:         {"lease"},
	rowMembersPartly:     {"mci"},
	rowMembersAll:        {"mci"},
	rowCreateFailed:      {"machine"},
	rowCreateInterrupted: {"machine"},
	rowStuck:             {"machine"},
	rowLiveChildren:      {"cloudlet"},
	rowBlocking:          {"cloudlet"},
	rowInUse:             {"cluster_template"},
}

// situations are the situations an object of kind k (with its typed resource c) can be in,
// one per state and status they concern; reg holds the kinds related to it. Objects their
// parent makes have none of their own.
func situations(reg *lifecycle.Registry, c kindConfig, k *lifecycle.Kind) []situation {
	if k.MadeByParent {
		return nil // no resource manages it: its parent's advice speaks for it
	}
	var out []situation
	add := func(s situation) {
		s.c, s.k = c, k
		out = append(out, s)
	}
	asks := c.statuses
	if !c.hasStatus() && c.aim != "" {
		asks = []string{c.aim}
	}
	for _, state := range k.StaticStates() {
		if k.IsGone(state) {
			continue
		}
		for _, asked := range asks {
			add(situation{event: evStatus, state: state, asked: asked})
		}
		if k.IsError(state) {
			errorAsks := asks
			if c.timeDriven {
				errorAsks = []string{""}
			}
			for _, asked := range errorAsks {
				add(situation{event: evError, state: state, asked: asked})
				if k.Update != "" {
					add(situation{event: evError, state: state, asked: asked, unapplied: true})
				}
			}
			add(situation{event: evCreateFailed, state: state})
		}
		if c.timeDriven && !k.IsError(state) && !slices.Contains(homeStates(k), state) && slices.ContainsFunc(k.AllActions(),
			func(a *lifecycle.Action) bool { return a.Actor == lifecycle.ActorTimer && a.At != "" && a.To == state }) {
			add(situation{event: evTimeEnded, state: state})
		}
		for _, f := range k.Fields {
			if len(f.UpdatableIn) == 0 || slices.Contains(f.UpdatableIn, state) {
				continue
			}
			var back []string
			for _, s := range f.UpdatableIn {
				if k.CanTransition(state, s, false) {
					back = append(back, s)
				}
			}
			add(situation{event: evField, state: state, field: f.Name, back: back})
		}
		if _, ok := c.members(); ok && !k.IsHeld(state) { // a held create has no members yet
			for _, asked := range asks {
				if k.IsHeld(asked) {
					continue // nor does one asked to be held
				}
				add(situation{event: evMembersFailed, state: state, asked: asked})
			}
		}
	}
	for _, asked := range asks {
		add(situation{event: evStatus, state: k.Create.To, asked: asked, isNew: true})
	}
	if slices.ContainsFunc(k.Fields, func(f lifecycle.Field) bool { return f.Immutable }) {
		add(situation{event: evImmutable})
	}
	add(situation{event: evCreateFailed})
	add(situation{event: evCreateFailed, timedOut: true})
	if _, ok := c.members(); ok {
		add(situation{event: evCreateFailed, allMembers: true})
	}
	if len(k.Create.Via) > 0 {
		add(situation{event: evCreateInterrupted, state: k.Create.Via[0].State})
	}
	if len(k.States.Transition) > 0 {
		add(situation{event: evStuck, state: k.States.Transition[0]})
	}
	if len(k.Deletion) == 0 && !k.MadeByParent {
		add(situation{event: evUndeletable})
	}
	var needs [][]string
	for _, ck := range reg.Kinds() {
		if ck.Parent != nil && ck.Parent.Kind == k.Name && len(ck.Parent.States) > 0 {
			needs = append(needs, ck.Parent.States)
		}
		for _, g := range ck.Guards {
			if g.Ancestor == k.Name {
				needs = append(needs, g.States)
			}
		}
	}
	for _, need := range needs {
		for _, state := range k.StaticStates() {
			if !k.IsGone(state) && !slices.Contains(need, state) {
				add(situation{event: evBlocking, state: state, need: need})
			}
		}
	}
	for _, ck := range reg.Kinds() {
		if ck.Parent != nil && ck.Parent.Kind == k.Name && ck.Parent.Delete == "refuse" {
			add(situation{event: evLiveChildren, atPlan: true})
			add(situation{event: evLiveChildren})
			break
		}
	}
	for _, ck := range reg.Kinds() {
		if slices.ContainsFunc(ck.Links, func(l lifecycle.Link) bool { return l.Kind == k.Name && l.Refuses() }) {
			add(situation{event: evInUse, atPlan: true})
			add(situation{event: evInUse})
			break
		}
	}
	return out
}

// RecoveryTable is the state-machine guide's recovery table (Markdown): for every situation
// the provider advises on, what Terraform does and what the user runs, as the messages say.
func RecoveryTable() string {
	configs := map[string]kindConfig{}
	for _, c := range append(typedKinds(), dataOnlyKinds()...) {
		configs[c.kind] = c
	}
	examples := map[row]advice{}
	exampleOf := map[row]situation{}
	pick := func(kinds []string) {
		for _, name := range kinds {
			c, ok := configs[name]
			if !ok {
				continue
			}
			k, _ := builtinKinds.Kind(name)
			for _, s := range situations(builtinKinds, c, k) {
				a := advise(s)
				if a.row == rowNone {
					continue
				}
				if want, ok := rowExamples[a.row]; ok && !slices.Contains(want, name) {
					continue
				}
				if _, seen := examples[a.row]; !seen {
					examples[a.row], exampleOf[a.row] = a, s
				}
			}
		}
	}
	var preferred []string
	for r := rowNone + 1; r < rowCount; r++ {
		preferred = append(preferred, rowExamples[r]...)
	}
	pick(preferred)
	var all []string
	for _, k := range builtinKinds.Kinds() {
		all = append(all, k.Name)
	}
	pick(all)
	var b strings.Builder
	b.WriteString("| Situation | What Terraform does | What you run |\n|---|---|---|\n")
	for r := rowNone + 1; r < rowCount; r++ {
		title := rowTitles[r]
		if s, ok := exampleOf[r]; ok {
			title += " (" + exampleText(s) + ")"
		}
		a, ok := examples[r]
		if !ok {
			a = advise(unshownSituations()[r])
			if a.row != r {
				// TestAdviceCoversRecoveryTable keeps every row shown.
				panic(fmt.Sprintf("recovery table: no kind is in the situation %q", rowTitles[r]))
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", title, a.does, a.run)
	}
	return b.String()
}

// unshownSituations are situations no built-in kind can be in, on a kind that can (built-in
// kinds reach every status they offer and can all be deleted; a kind file may have a status
// only a failure leads to, and no deletion mode).
func unshownSituations() map[row]situation {
	kinds, err := lifecycle.Parse("example.yaml", []byte(`
kinds:
  - name: example
    family: example
    collection: examples
    states: {static: [ON, STANDBY], transition: [BOOTING]}
    create: {via: [BOOTING], to: ON, failure: {to: STANDBY}}
    actions:
      - {name: wake, from: [STANDBY], to: ON}
`))
	if err != nil {
		panic(fmt.Sprintf("recovery table: the example kind: %v", err))
	}
	k := kinds[0]
	c := deriveConfig(k, familyDoc{})
	return map[row]situation{
		rowUnreachable: {c: c, k: k, event: evStatus, state: "ON", asked: "STANDBY", isNew: true},
		rowUndeletable: {c: c, k: k, event: evUndeletable},
	}
}

// exampleText names a situation's example: the kind, where it is and what it is asked.
func exampleText(s situation) string {
	out := "e.g. `" + s.k.Name + "`"
	switch {
	case s.event == evImmutable || s.event == evUndeletable || s.event == evCreateFailed && s.state == "":
	case s.event == evLiveChildren || s.event == evInUse:
	case s.event == evBlocking:
		out += fmt.Sprintf(" in `%s`, needed `%s`", s.state, strings.Join(s.need, "` or `"))
	case s.isNew:
		out += " asked to be `" + s.asked + "`"
	case s.event == evField:
		out += fmt.Sprintf(" `%s` changed in `%s`", s.field, s.state)
	case s.event == evCreateInterrupted || s.event == evStuck:
		out += " in `" + s.state + "`"
	default:
		out += " in `" + s.state + "`"
		if s.asked != "" && s.asked != s.state {
			out += " asked to be `" + s.asked + "`"
		}
	}
	return out
}

// The recovery table sits in the guide's template between these template comments, which
// tfplugindocs drops.
const (
	recoveryBegin = "{{/* The recovery table: generated from provider/advice.go by make generate (internal/advicedoc); do not edit. */}}\n"
	recoveryEnd   = "{{/* End of the recovery table. */}}\n"
)

// WithRecoveryTable returns the guide template tmpl with its recovery table (between the
// markers) replaced by RecoveryTable.
func WithRecoveryTable(tmpl []byte) ([]byte, error) {
	begin := bytes.Index(tmpl, []byte(recoveryBegin))
	end := bytes.Index(tmpl, []byte(recoveryEnd))
	if begin < 0 || end < begin {
		return nil, fmt.Errorf("the template has no recovery table between %q and %q", recoveryBegin, recoveryEnd)
	}
	var out bytes.Buffer
	out.Write(tmpl[:begin+len(recoveryBegin)])
	out.WriteString(RecoveryTable())
	out.Write(tmpl[end:])
	return out.Bytes(), nil
}
