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
	if k.Hold != "" {
		edge("[*]", mermaidID(k.Hold), "create held")
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

// RelationsMermaid renders how the kinds of a family relate, as a Mermaid flowchart: parents
// and their delete policy, children a create makes, propagated actions and landings, derived
// status, guards, links and invariants. It returns "" for a family whose kinds stand alone.
func (r *Registry) RelationsMermaid(family string) string {
	var kinds []*Kind
	for _, k := range r.Kinds() {
		if k.Family == family {
			kinds = append(kinds, k)
		}
	}
	var lines []string
	add := func(format string, args ...any) {
		l := "    " + fmt.Sprintf(format, args...)
		if !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	for _, k := range kinds {
		if k.Parent != nil {
			add("%s -->|\"parent of (delete: %s)\"| %s", k.Parent.Kind, k.DeletePolicy(), k.Name)
		}
		for _, c := range k.Children {
			how := "makes " + c.Name
			switch {
			case c.Each != "" && c.Count != "":
				how = fmt.Sprintf("makes %s × %s", c.Each, c.Count)
			case c.Each != "":
				how = "makes one per " + c.Each
			}
			if c.Wait {
				how += ", waits"
			}
			if c.Limit != nil {
				how += ", limited per " + c.Limit.Outer + "/" + c.Limit.Inner
			}
			add("%s ==>|\"%s\"| %s", k.Name, how, c.Kind)
		}
		for _, p := range k.Propagate {
			target := p.To.Kind(k)
			var how string
			switch {
			case len(p.Start) > 0:
				how = strings.Join(p.Start, ", ")
			default:
				how = "lands " + strings.Join(p.Land, ", ")
			}
			switch {
			case p.Remove:
				how += " → remove"
			case p.Abort:
				how += " → abort"
			default:
				how += " → " + p.RunAction(strings.Join(p.Start, ", "))
			}
			if len(p.States) > 0 {
				how += " (" + strings.Join(p.States, ", ") + ")"
			}
			switch {
			case p.Wait:
				how += ", waits"
			case p.Follow:
				how += ", follows"
			}
			if p.Limit != nil {
				how += ", limited per " + p.Limit.Outer + "/" + p.Limit.Inner
			}
			add("%s -.->|\"%s\"| %s", k.Name, how, target)
		}
		if k.Derive != nil {
			var by []string
			for _, u := range k.Derive.Use {
				by = append(by, u.Function)
			}
			if k.Derive.Function != "" {
				by = append(by, k.Derive.Function)
			}
			add("%s -.->|\"status derived (%s)\"| %s", k.Derive.From, strings.Join(by, ", "), k.Name)
		}
		for _, g := range k.Guards {
			target := g.Ancestor
			if g.Link != "" {
				target = k.linkTo(g.Link)
			}
			add("%s -.->|\"guard: needs %s\"| %s", k.Name, strings.Join(g.States, ", "), target)
		}
		for _, l := range k.Links {
			label := l.Field
			if l.Refuses() {
				label += " (delete: refuse)"
			}
			add("%s -->|\"%s\"| %s", k.Name, label, l.Kind)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	for _, k := range kinds {
		label := k.Name
		if len(k.Invariants) > 0 {
			label += "<br/>invariant: " + strings.Join(k.Invariants, ", ")
		}
		if k.MadeByParent {
			label += "<br/>(made by its " + k.Parent.Kind + ")"
		}
		fmt.Fprintf(&b, "    %s[\"%s\"]\n", k.Name, label)
	}
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// Families returns the families of the registry's kinds, sorted.
func (r *Registry) Families() []string {
	var out []string
	for _, k := range r.Kinds() {
		if !slices.Contains(out, k.Family) {
			out = append(out, k.Family)
		}
	}
	slices.Sort(out)
	return out
}
