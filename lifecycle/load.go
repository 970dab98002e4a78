package lifecycle

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

//go:embed specs/*.yaml
var builtinSpecs embed.FS

// File is the top-level shape of a spec file: a list of kinds.
type File struct {
	Kinds []Kind `yaml:"kinds" json:"kinds"`
}

// UnmarshalYAML reads a duration written as a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	// A *yaml.TypeError (not a plain error) lets the decoder collect it with the others.
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: invalid duration %q (write it like 2s or 1m30s)", n.Line, n.Value)}}
	}
	if v < 0 {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: negative duration %q", n.Line, n.Value)}}
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes a duration as a Go duration string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// MarshalText writes a duration as a Go duration string (used by JSON).
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads a duration written as a Go duration string (used by JSON).
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// UnmarshalYAML accepts a phase written as a bare state name or as a mapping.
func (p *Phase) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		p.State = n.Value
		return nil
	}
	// Unknown keys were reported by checkKeys, in the spec's words.
	type plain Phase
	return n.Decode((*plain)(p))
}

// Parse reads the kinds of one spec file and validates each of them on its own. name is used
// in error messages. Cross-kind rules (parents, unique names) are checked by Registry.Add.
// Deprecated key names load under their new names; ParseWarn also returns their warnings.
func Parse(name string, data []byte) ([]*Kind, error) {
	kinds, _, err := ParseWarn(name, data)
	return kinds, err
}

// ParseWarn is Parse, also returning the warnings of a file that loads: deprecated key names,
// each located and naming its new name.
func ParseWarn(name string, data []byte) ([]*Kind, SpecErrors, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		line, msg := splitLine(strings.TrimPrefix(err.Error(), "yaml: "))
		return nil, nil, &SpecError{File: name, Line: line, Msg: msg}
	}
	if root.Kind == 0 {
		return nil, nil, &SpecError{File: name, Msg: "empty spec file: write `kinds:` followed by a list of kinds"}
	}
	// The format's own check first: unknown keys and wrong shapes in the spec's words, and
	// deprecated keys renamed in the tree before it is decoded.
	keys := checkKeys(name, &root)
	errs, warns := keys.errs, keys.warns
	if keys.shaped {
		return nil, warns, errs
	}
	// Unknown keys are left out of the decoded kinds; the other problems are worth knowing in
	// the same run.
	var f File
	if err := root.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, warns, append(errs, asSpecErrors(decodeErrors(name, &root, err))...)
	}
	if len(f.Kinds) == 0 {
		return nil, warns, append(errs, &SpecError{File: name, Field: "kinds", Msg: "no kinds: write `kinds:` followed by a list of kinds"})
	}
	kinds := make([]*Kind, 0, len(f.Kinds))
	for i := range f.Kinds {
		k := &f.Kinds[i]
		k.file = name
		loc := locator{file: name, root: &root, index: i, kind: k.Name}
		k.loc = loc
		for _, e := range k.compile(loc) {
			if keys.keep(e) {
				errs = append(errs, e)
			}
		}
		kinds = append(kinds, k)
	}
	if len(errs) > 0 {
		return nil, warns, errs
	}
	return kinds, warns, nil
}

// LoadFiles reads user kind files and adds their kinds to r together, exactly as
// lifecyclesim --kinds does (so kinds of one file may refer to kinds of another). It returns
// the files' warnings, and every problem found; nothing is added when there is one.
func (r *Registry) LoadFiles(files ...string) (SpecErrors, error) {
	_, warns, err := r.loadFiles(files...)
	return warns, err
}

func (r *Registry) loadFiles(files ...string) ([]*Kind, SpecErrors, error) {
	var warns, errs SpecErrors
	var kinds []*Kind
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, warns, fmt.Errorf("read kinds file: %w", err)
		}
		ks, ws, err := ParseWarn(file, data)
		warns = append(warns, ws...)
		if err != nil {
			var se SpecErrors
			var one *SpecError
			switch {
			case errors.As(err, &se):
				errs = append(errs, se...)
			case errors.As(err, &one):
				errs = append(errs, one)
			default:
				return nil, warns, err
			}
			continue
		}
		kinds = append(kinds, ks...)
	}
	if len(errs) > 0 {
		return nil, warns, errs
	}
	if err := r.Add(kinds...); err != nil {
		return nil, warns, err
	}
	return kinds, warns, nil
}

// asSpecErrors lists the problems an error holds.
func asSpecErrors(err error) SpecErrors {
	var errs SpecErrors
	var one *SpecError
	switch {
	case errors.As(err, &errs):
		return errs
	case errors.As(err, &one):
		return SpecErrors{one}
	}
	return SpecErrors{{Msg: err.Error()}}
}

// decodeErrors turns the decoder's errors ("line N: field x not found in type ...") into spec
// errors located by line and by the kind whose entry holds that line.
func decodeErrors(file string, root *yaml.Node, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		line, msg := splitLine(err.Error())
		return &SpecError{File: file, Line: line, Kind: kindAtLine(root, line), Msg: msg}
	}
	errs := make(SpecErrors, 0, len(te.Errors))
	for _, m := range te.Errors {
		line, msg := splitLine(m)
		errs = append(errs, &SpecError{File: file, Line: line, Kind: kindAtLine(root, line), Msg: msg})
	}
	return errs
}

// splitLine splits "line N: message" into N and the message; line is 0 when there is none.
func splitLine(msg string) (int, string) {
	rest, ok := strings.CutPrefix(msg, "line ")
	if !ok {
		return 0, msg
	}
	num, tail, ok := strings.Cut(rest, ":")
	if !ok {
		return 0, msg
	}
	n, err := strconv.Atoi(num)
	if err != nil {
		return 0, msg
	}
	return n, strings.TrimSpace(tail)
}

// kindAtLine names the kind whose entry in the `kinds` list holds line ("" if none does or it
// has no name yet).
func kindAtLine(root *yaml.Node, line int) string {
	n := root
	if n == nil || line <= 0 {
		return ""
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	kinds := child(n, "kinds")
	if kinds == nil || kinds.Kind != yaml.SequenceNode {
		return ""
	}
	name := ""
	for _, k := range kinds.Content {
		if k.Line > line {
			break
		}
		name = ""
		if v := child(k, "name"); v != nil && v.Kind == yaml.ScalarNode {
			name = v.Value
		}
	}
	return name
}

// LoadFile reads and validates a user's spec file.
func LoadFile(file string) ([]*Kind, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read kinds file: %w", err)
	}
	return Parse(file, data)
}

// Builtin returns a registry holding every kind of the five seed systems.
func Builtin() *Registry {
	r, err := loadBuiltin()
	if err != nil {
		// The built-in specs are validated by the package's tests; a failure here is a bug.
		panic(fmt.Sprintf("lifecycle: built-in specs are invalid: %v", err))
	}
	return r
}

func loadBuiltin() (*Registry, error) {
	entries, err := builtinSpecs.ReadDir("specs")
	if err != nil {
		return nil, err
	}
	r := NewRegistry()
	for _, e := range entries {
		name := path.Join("specs", e.Name())
		data, err := builtinSpecs.ReadFile(name)
		if err != nil {
			return nil, err
		}
		kinds, err := Parse(name, data)
		if err != nil {
			return nil, err
		}
		if err := r.Add(kinds...); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func cmpOr(a, b *Kind) *Kind {
	if a != nil {
		return a
	}
	return b
}

// locator finds the line of a field of one kind in the parsed document.
type locator struct {
	file  string
	root  *yaml.Node
	index int
	kind  string
}

func (l locator) err(field, format string, args ...any) *SpecError {
	return &SpecError{File: l.file, Kind: l.kind, Field: field, Line: l.line(field), Msg: fmt.Sprintf(format, args...)}
}

// line walks a field path such as "actions[2].via[0]" from the kind's node.
func (l locator) line(field string) int {
	n := l.root
	if n == nil {
		return 0
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	n = child(child(n, "kinds"), l.index)
	best := 0
	if n != nil {
		best = n.Line
	}
	for _, part := range strings.Split(field, ".") {
		if part == "" {
			continue
		}
		key, idx, hasIdx := strings.Cut(part, "[")
		n = child(n, key)
		if n == nil {
			return best
		}
		best = n.Line
		if hasIdx {
			i, _ := strconv.Atoi(strings.TrimSuffix(idx, "]"))
			n = child(n, i)
			if n == nil {
				return best
			}
			best = n.Line
		}
	}
	return best
}

// child returns a mapping's value by key (string) or a sequence's item by index (int).
func child(n *yaml.Node, key any) *yaml.Node {
	if n == nil {
		return nil
	}
	switch k := key.(type) {
	case string:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				return n.Content[i+1]
			}
		}
	case int:
		if n.Kind == yaml.SequenceNode && k >= 0 && k < len(n.Content) {
			return n.Content[k]
		}
	}
	return nil
}
