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
	if len(a.Via) == 0 {
		return
	}
	f := k.FailureRule(a)
	if f.Retry {
		return
	}
	fail := mermaidID(a.Via[len(a.Via)-1].State)
	l := "fails"
	for _, p := range f.Via {
		edge(fail, mermaidID(p.State), l)
		fail, l = mermaidID(p.State), ""
	}
	switch {
	case f.Rollback && from != "any state" && from != "[*]":
		edge(fail, mermaidID(from), l)
	case f.To != "":
		edge(fail, mermaidID(f.To), l)
	}
	if f.Fatal != "" {
		edge(mermaidID(a.Via[len(a.Via)-1].State), mermaidID(f.Fatal), "fails (fatal)")
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
