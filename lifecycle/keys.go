package lifecycle

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// The spec format's keys, read from the Go types' yaml tags: the loader checks a file against
// them before decoding it (unknown keys, wrong shapes and deprecated names are reported in the
// spec's own words, located by line), and the reference page and the JSON Schema are generated
// from them, so none of the three can drift from the types.
//
// A key renamed in the spec format keeps its old YAML name in a `was` tag: it still loads,
// with a warning that names the new one. The JSON tags (GET /v1/kinds, what the provider reads)
// keep the old names, so providers and simulators of different releases understand each other.

// Shape is what a key's value looks like in YAML.
type Shape int

// The shapes of the format's values.
const (
	ShapeString Shape = iota + 1
	ShapeBool
	ShapeInt
	ShapeNumber
	ShapeDuration
	ShapeAny
	ShapeObject
	ShapeList
	ShapeMap
	// ShapeNames is one name or a list of names (Names).
	ShapeNames
	// ShapePhase is a transition state's name or a phase mapping (Phase).
	ShapePhase
)

// specType is the spec format's view of one Go type.
type specType struct {
	// word names values of the type in messages and in the reference ("action").
	word  string
	shape Shape
	// keys of an object (or of a phase written as a mapping), in declaration order.
	keys []*specKey
	// elem is the type of a list's items or a map's values.
	elem *specType
	// ref is the anchor of an object type in the reference and in the JSON Schema ($defs).
	ref string
}

// specKey is one key of an object type.
type specKey struct {
	name string
	// json is the key's name on the wire (GET /v1/kinds); it differs from name for renamed keys.
	json string
	// was lists old names that still load, with a deprecation warning.
	was   []string
	typ   *specType
	field string // the Go field, for the doc table's completeness test
	owner *specType
}

// objectWords name the spec's object types in messages and in the reference.
var objectWords = map[reflect.Type][2]string{
	reflect.TypeFor[File]():        {"spec file", "file"},
	reflect.TypeFor[Kind]():        {"kind", "kind"},
	reflect.TypeFor[States]():      {"states", "states"},
	reflect.TypeFor[Action]():      {"action", "action"},
	reflect.TypeFor[Phase]():       {"phase", "phase"},
	reflect.TypeFor[Failure]():     {"failure", "failure"},
	reflect.TypeFor[Parent]():      {"parent", "parent"},
	reflect.TypeFor[Field]():       {"field", "field"},
	reflect.TypeFor[Child]():       {"child", "child"},
	reflect.TypeFor[Propagation](): {"propagation", "propagation"},
	reflect.TypeFor[Selector]():    {"propagation target (`to`)", "selector"},
	reflect.TypeFor[LinkRef]():     {"linked selector", "linkref"},
	reflect.TypeFor[Limit]():       {"limit", "limit"},
	reflect.TypeFor[GroupLimit]():  {"group limit", "grouplimit"},
	reflect.TypeFor[Derive]():      {"derive", "derive"},
	reflect.TypeFor[Derivation]():  {"derivation", "derivation"},
	reflect.TypeFor[Guard]():       {"guard", "guard"},
	reflect.TypeFor[Link]():        {"link", "link"},
}

var (
	specRootOnce sync.Once
	specRoot     *specType
)

// fileType is the spec type of a whole spec file.
func fileType() *specType {
	specRootOnce.Do(func() {
		seen := map[reflect.Type]*specType{}
		specRoot = typeOf(reflect.TypeFor[File](), seen)
	})
	return specRoot
}

func typeOf(t reflect.Type, seen map[reflect.Type]*specType) *specType {
	switch t {
	case reflect.TypeFor[Names]():
		return &specType{word: "name or list of names", shape: ShapeNames}
	case reflect.TypeFor[Duration]():
		return &specType{word: "duration", shape: ShapeDuration}
	}
	if st, ok := seen[t]; ok {
		return st
	}
	switch t.Kind() {
	case reflect.Pointer:
		return typeOf(t.Elem(), seen)
	case reflect.String:
		return &specType{word: "string", shape: ShapeString}
	case reflect.Bool:
		return &specType{word: "boolean", shape: ShapeBool}
	case reflect.Int, reflect.Int64:
		return &specType{word: "integer", shape: ShapeInt}
	case reflect.Float64:
		return &specType{word: "number", shape: ShapeNumber}
	case reflect.Interface:
		return &specType{word: "any value", shape: ShapeAny}
	case reflect.Slice:
		return &specType{word: "list", shape: ShapeList, elem: typeOf(t.Elem(), seen)}
	case reflect.Map:
		return &specType{word: "map", shape: ShapeMap, elem: typeOf(t.Elem(), seen)}
	case reflect.Struct:
		words, ok := objectWords[t]
		if !ok {
			panic("lifecycle: no spec word for " + t.String())
		}
		st := &specType{word: words[0], shape: ShapeObject, ref: words[1]}
		if t == reflect.TypeFor[Phase]() {
			st.shape = ShapePhase
		}
		seen[t] = st
		for i := range t.NumField() {
			f := t.Field(i)
			tag, ok := f.Tag.Lookup("yaml")
			if !ok || !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			jsonName, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			k := &specKey{name: name, json: jsonName, typ: typeOf(f.Type, seen), field: t.Name() + "." + f.Name, owner: st}
			if was := f.Tag.Get("was"); was != "" {
				k.was = strings.Split(was, ",")
			}
			st.keys = append(st.keys, k)
		}
		return st
	}
	panic("lifecycle: no spec shape for " + t.String())
}

func (t *specType) key(name string) *specKey {
	for _, k := range t.keys {
		if k.name == name {
			return k
		}
	}
	return nil
}

func (t *specType) keyNames() []string {
	out := make([]string, len(t.keys))
	for i, k := range t.keys {
		out[i] = k.name
	}
	return out
}

// article puts "a" or "an" before a word.
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an " + word
	}
	return "a " + word
}

// expects says what a value of the type looks like, for messages.
func (t *specType) expects() string {
	switch t.shape {
	case ShapeString:
		return "a string"
	case ShapeBool:
		return "true or false"
	case ShapeInt:
		return "a whole number"
	case ShapeNumber:
		return "a number"
	case ShapeDuration:
		return "a duration such as 2s or 1m30s"
	case ShapeObject:
		return "a mapping of " + t.word + " keys (key: value)"
	case ShapeList:
		return "a list (write [a, b] or one `- item` per line)"
	case ShapeMap:
		return "a mapping (key: value)"
	case ShapeNames:
		return "a name or a list of names"
	case ShapePhase:
		return "a transition state's name or a phase mapping ({state: S, ...})"
	}
	return "a value"
}

// keyCheck walks a parsed spec file against the format's keys.
type keyCheck struct {
	file string
	errs SpecErrors
	// warns are deprecation warnings: the file loads, under the new names.
	warns SpecErrors
	// renamed remembers nodes already rewritten (an alias is walked once per use).
	renamed map[*yaml.Node]bool
	kind    string
	// shaped is set when a value has the wrong shape: the file cannot be decoded then.
	shaped bool
	// guessed are the paths of the keys an unknown key was probably meant to be: the decoded
	// kind lacks them, and errors about that would only repeat the slip.
	guessed []string
}

func (c *keyCheck) add(list *SpecErrors, n *yaml.Node, path, format string, args ...any) {
	*list = append(*list, &SpecError{File: c.file, Kind: c.kind, Field: path, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
}

// checkKeys checks a spec file's document against the format. It renames deprecated keys in
// place (so the decoder reads them under their new names) and reports each with a warning.
func checkKeys(file string, root *yaml.Node) *keyCheck {
	c := &keyCheck{file: file, renamed: map[*yaml.Node]bool{}}
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	ft := fileType()
	if n.Kind != yaml.MappingNode {
		c.shaped = true
		c.add(&c.errs, n, "", "a spec file is a mapping with one key, `kinds:`, followed by a list of kinds")
		return c
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		if key.Value != "kinds" {
			c.unknownKey(key, "", ft)
			continue
		}
		val = deref(val)
		if isNull(val) {
			continue
		}
		if val.Kind != yaml.SequenceNode {
			c.shaped = true
			c.add(&c.errs, val, "kinds", "`kinds` must be a list of kinds (one `- name: ...` entry per kind)")
			continue
		}
		kt := ft.key("kinds").typ.elem
		for _, item := range val.Content {
			c.kind = ""
			if v := child(deref(item), "name"); v != nil && v.Kind == yaml.ScalarNode {
				c.kind = v.Value
			}
			c.walk(item, "", kt)
		}
		c.kind = ""
	}
	return c
}

// keep reports whether a problem found after decoding is worth reporting next to the key
// problems: not when it is about a key an unknown key was probably meant to be.
func (c *keyCheck) keep(e *SpecError) bool {
	for _, g := range c.guessed {
		if e.Field == g || strings.HasPrefix(e.Field, g+".") || strings.HasPrefix(e.Field, g+"[") {
			return false
		}
	}
	return true
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "nothing"
}

// walk checks one value against its type.
func (c *keyCheck) walk(n *yaml.Node, path string, t *specType) {
	n = deref(n)
	if n == nil || isNull(n) {
		return
	}
	wrong := func() {
		c.shaped = true
		c.add(&c.errs, n, path, "must be %s, not %s", t.expects(), kindName(n))
	}
	switch t.shape {
	case ShapeAny:
	case ShapeString:
		if n.Kind != yaml.ScalarNode {
			wrong()
		}
	case ShapeBool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			wrong()
		}
	case ShapeInt:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			wrong()
		}
	case ShapeNumber:
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
			wrong()
		}
	case ShapeDuration:
		// Duration.UnmarshalYAML reports bad values, with the decoder's other errors.
		if n.Kind != yaml.ScalarNode {
			wrong()
		}
	case ShapeNames:
		switch n.Kind {
		case yaml.ScalarNode:
		case yaml.SequenceNode:
			for i, it := range n.Content {
				if it := deref(it); it.Kind != yaml.ScalarNode {
					c.shaped = true
					c.add(&c.errs, it, fmt.Sprintf("%s[%d]", path, i), "must be a name, not %s", kindName(it))
				}
			}
		default:
			wrong()
		}
	case ShapePhase:
		switch n.Kind {
		case yaml.ScalarNode:
		case yaml.MappingNode:
			c.object(n, path, t)
		default:
			wrong()
		}
	case ShapeObject:
		if n.Kind != yaml.MappingNode {
			wrong()
			return
		}
		c.object(n, path, t)
	case ShapeList:
		if n.Kind != yaml.SequenceNode {
			wrong()
			return
		}
		for i, it := range n.Content {
			c.walk(it, fmt.Sprintf("%s[%d]", path, i), t.elem)
		}
	case ShapeMap:
		if n.Kind != yaml.MappingNode {
			wrong()
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			c.walk(n.Content[i+1], join(path, n.Content[i].Value), t.elem)
		}
	}
}

// object checks a mapping's keys: each known (or deprecated, then renamed), once.
func (c *keyCheck) object(n *yaml.Node, path string, t *specType) {
	present := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		present[n.Content[i].Value] = true
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		if key.Tag == "!!merge" {
			continue
		}
		k := t.key(key.Value)
		if k == nil {
			for _, cand := range t.keys {
				if slices.Contains(cand.was, key.Value) {
					k = cand
					break
				}
			}
			if k == nil {
				c.unknownKey(key, path, t)
				continue
			}
			if present[k.name] {
				c.add(&c.errs, key, join(path, key.Value), "%q is the old name of %q, and both are set: keep %q only", key.Value, k.name, k.name)
				continue
			}
			if !c.renamed[key] {
				c.renamed[key] = true
				c.add(&c.warns, key, join(path, key.Value), "deprecated key %q: write %q instead (%s); the old name still loads", key.Value, k.name, deprecationNote(k))
				key.Value = k.name
			}
		}
		c.walk(val, join(path, k.name), k.typ)
	}
}

// deprecationNote says briefly why a key was renamed.
func deprecationNote(k *specKey) string {
	if note, ok := renameNotes[k.field]; ok {
		return note
	}
	return "renamed"
}

var renameNotes = map[string]string{
	"Parent.States":       "the states another object must be in are `in` everywhere",
	"Action.ParentStates": "the states another object must be in are `in` everywhere",
	"Propagation.States":  "the states another object must be in are `in` everywhere",
	"Guard.States":        "the states another object must be in are `in` everywhere",
	"Link.States":         "the states another object must be in are `in` everywhere",
	"Propagation.Action":  "the actions something applies to are `actions` everywhere",
	"Derive.From":         "`from` always lists states; the child kind is `children`, as in a propagation's `to`",
}

func (c *keyCheck) unknownKey(key *yaml.Node, path string, t *specType) {
	names := t.keyNames()
	if best := closest(key.Value, names); best != "" {
		c.guessed = append(c.guessed, join(path, best))
	}
	c.add(&c.errs, key, join(path, key.Value), "unknown key %q in %s%s; its keys are %s",
		key.Value, article(t.word), didYouMean(key.Value, names), strings.Join(names, ", "))
}

// closest returns the candidate nearest to s by edit distance, if it is near enough to be
// a slip ("" otherwise). Case differences count as near.
func closest(s string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		d := editDistance(strings.ToLower(s), strings.ToLower(c))
		if strings.EqualFold(s, c) {
			d = 0
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	limit := max(1, min(3, len(s)/3))
	if bestD > limit && !(best != "" && (strings.HasPrefix(best, s) || strings.HasPrefix(s, best)) && len(s) >= 3) {
		return ""
	}
	return best
}

// didYouMean is ` (did you mean "X"?)` when a candidate is near s.
func didYouMean(s string, candidates []string) string {
	if best := closest(s, candidates); best != "" && best != s {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Optimal string alignment: insertions, deletions, substitutions and swaps of neighbours
	// (from/form) each count one.
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
