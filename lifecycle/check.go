package lifecycle

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// CheckFiles loads kind files exactly as lifecyclesim --kinds does, together with the built-in
// kinds, and writes every problem and warning to w, one a line, each located by file:line and
// saying what to write instead. It reports whether the files load (warnings do not stop them).
func CheckFiles(w io.Writer, files ...string) bool {
	kinds, warns, err := Builtin().loadFiles(files...)
	for _, e := range sortSpecErrors(warns) {
		fmt.Fprintln(w, e.Located("warning"))
	}
	if err != nil {
		var errs SpecErrors
		var one *SpecError
		switch {
		case errors.As(err, &errs):
		case errors.As(err, &one):
			errs = SpecErrors{one}
		default:
			fmt.Fprintln(w, err)
			return false
		}
		for _, e := range sortSpecErrors(errs) {
			fmt.Fprintln(w, e.Located("error"))
		}
		fmt.Fprintf(w, "%d %s in %s\n", len(errs), plural(len(errs), "problem", "problems"), strings.Join(files, ", "))
		return false
	}
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.Name
	}
	fmt.Fprintf(w, "%s: %d %s OK (%s)", strings.Join(files, ", "), len(kinds), plural(len(kinds), "kind", "kinds"), strings.Join(names, ", "))
	if len(warns) > 0 {
		fmt.Fprintf(w, ", %d %s", len(warns), plural(len(warns), "warning", "warnings"))
	}
	fmt.Fprintln(w)
	return true
}

// RenderFiles loads kind files as CheckFiles does and writes, for each of their kinds, its
// Mermaid state diagram, then the relations diagram of each of their families, as Markdown.
func RenderFiles(w io.Writer, files ...string) error {
	r := Builtin()
	kinds, _, err := r.loadFiles(files...)
	if err != nil {
		return err
	}
	var families []string
	for _, k := range kinds {
		fmt.Fprintf(w, "## %s\n\n", k.Name)
		if k.Description != "" {
			fmt.Fprintf(w, "%s\n\n", strings.TrimSpace(k.Description))
		}
		fmt.Fprintf(w, "```mermaid\n%s```\n\n", k.Mermaid())
		if !slices.Contains(families, k.Family) {
			families = append(families, k.Family)
		}
	}
	for _, f := range families {
		rel := r.RelationsMermaid(f)
		if rel == "" {
			continue
		}
		title := "Relations"
		if f != "" {
			title += " of " + f
		}
		fmt.Fprintf(w, "## %s\n\n```mermaid\n%s```\n\n", title, rel)
	}
	return nil
}

// Located writes the problem as "file:line: severity: kind "k": field: message".
func (e *SpecError) Located(severity string) string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": " + severity)
	if e.Kind != "" {
		fmt.Fprintf(&b, ": kind %q", e.Kind)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": %s", e.Field)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

func sortSpecErrors(es SpecErrors) SpecErrors {
	out := slices.Clone(es)
	slices.SortStableFunc(out, func(a, b *SpecError) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
