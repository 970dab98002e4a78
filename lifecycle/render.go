package lifecycle

import (
	"fmt"
	"slices"
	"strings"
)

// Mermaid renders the kind as a Mermaid state diagram. Transition states are drawn dashed;
// edges are labelled with the action (and its actor when it is not a user); failure edges are
// labelled "fails"; gone states lead to the end marker.
func (k *Kind) Mermaid() string {
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	b.WriteString("    classDef transition fill:#fff3e0,stroke:#e65100,stroke-dasharray:4 4\n")
	b.WriteString("    classDef error fill:#ffebee,stroke:#c62828\n")
	for _, s := range k.allStates() {
		if id := mermaidID(s); id != s {
			fmt.Fprintf(&b, "    state %q as %s\n", s, id)
		}
	}
	var lines []string
	edge := func(from, to, label string) {
		l := fmt.Sprintf("    %s --> %s", from, to)
		if label != "" {
			l += ": " + label
		}
		if !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	if k.Initial != "" {
		edge("[*]", mermaidID(k.Initial), "")
	}
	for _, a := range k.AllActions() {
		label := a.Name
		if !a.ByUser() {
			label += " (" + string(a.Actor) + ")"
		}
		froms := slices.Clone(a.From)
		froms = append(froms, a.ForceFrom...)
		if a.FromAny {
			froms = []string{"any state"}
		}
		if a == &k.Create && k.Initial == "" {
			froms = []string{"[*]"}
		}
		for _, from := range froms {
			targets := []string{a.To}
			if a.Returns {
				targets = []string{from}
			}
			for _, to := range targets {
				k.renderPath(edge, from, a, to, label)
			}
		}
	}
	for _, s := range k.States.Gone {
		edge(mermaidID(s), "[*]", "")
	}
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	for _, s := range k.States.Transition {
		fmt.Fprintf(&b, "    class %s transition\n", mermaidID(s))
	}
	for _, s := range k.States.Error {
		fmt.Fprintf(&b, "    class %s error\n", mermaidID(s))
	}
	return b.String()
}

// renderPath draws an action's phases from one start state, and its failure path.
func (k *Kind) renderPath(edge func(from, to, label string), from string, a *Action, to, label string) {
	prev := mermaidID(from)
	if from == "any state" {
		prev = "[*]"
		label += " (from any state)"
	}
	first := true
	for _, p := range a.Via {
		l := ""
		if first {
			l = label
		}
		edge(prev, mermaidID(p.State), l)
		prev = mermaidID(p.State)
		first = false
	}
	if first {
		edge(prev, mermaidID(to), label)
	} else {
		edge(prev, mermaidID(to), "")
	}
	// A skippable phase may be skipped when its message is lost.
	for i, p := range a.Via {
		if !p.Skippable {
			continue
		}
		before, after := mermaidID(from), mermaidID(to)
		if i > 0 {
			before = mermaidID(a.Via[i-1].State)
		}
		if i+1 < len(a.Via) {
			after = mermaidID(a.Via[i+1].State)
		}
		edge(before, after, "message lost")
	}
	f := k.FailureRule(a)
	if len(a.Via) == 0 || f.Retry {
		return
	}
	// Any phase may fail.
	for _, p := range a.Via {
		phase := mermaidID(p.State)
		switch {
		case len(f.Via) > 0:
			edge(phase, mermaidID(f.Via[0].State), "fails")
		case f.Rollback && from != "any state" && from != "[*]":
			edge(phase, mermaidID(from), "fails")
		case f.To != "":
			edge(phase, mermaidID(f.To), "fails")
		}
		if f.Fatal != "" {
			edge(phase, mermaidID(f.Fatal), "fails (fatal)")
		}
	}
	if len(f.Via) > 0 {
		fail := mermaidID(f.Via[0].State)
		for _, p := range f.Via[1:] {
			edge(fail, mermaidID(p.State), "")
			fail = mermaidID(p.State)
		}
		switch {
		case f.Rollback && from != "any state" && from != "[*]":
			edge(fail, mermaidID(from), "")
		case f.To != "":
			edge(fail, mermaidID(f.To), "")
		}
	}
}

// mermaidID turns a state name into a Mermaid identifier.
func mermaidID(s string) string {
	if s == "[*]" {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return '_'
		}
		return r
	}, s)
}
