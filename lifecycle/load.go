package lifecycle

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

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

// reservedCollections are the segments the API's router serves under /v1 itself: a kind
// named after one would be shadowed (GET /v1/kinds/{id} answers a kind spec, not the object)
// or sit in the simulator's control namespace (/v1/sim/...).
var reservedCollections = []string{"kinds", "sim"}

// collectionProblem says why the API cannot route a collection name, with the fix, or "".
// Go's client escapes every name, but the router refuses an escaped / or ; and anyone who
// writes the URL by hand (curl, a browser, another language's client) cannot use ?, #, %,
// blanks, or the dot segments . and .. that URL resolution removes.
func collectionProblem(coll string) string {
	if slices.Contains(reservedCollections, coll) {
		return fmt.Sprintf("collection %q is a route of the API itself (/v1/%s): choose another URL path segment, such as %ss",
			coll, coll, strings.TrimSuffix(coll, "s")+"_object")
	}
	if coll == "." || coll == ".." {
		return fmt.Sprintf("collection %q is a dot segment, which URL resolution removes from a path: choose a name such as gadgets", coll)
	}
	if i := strings.IndexFunc(coll, func(r rune) bool {
		return strings.ContainsRune("/?#%;\\", r) || unicode.IsSpace(r) || unicode.IsControl(r)
	}); i >= 0 {
		fixed := strings.Map(func(r rune) rune {
			if strings.ContainsRune("/?#%;\\", r) || unicode.IsSpace(r) || unicode.IsControl(r) {
				return '_'
			}
			return r
		}, coll)
		return fmt.Sprintf("collection %q cannot be routed: it is one segment of the URL /v1/{collection}/{id}, and %q splits or ends it; use letters, digits, - and _ (such as %q)",
			coll, string([]rune(coll[i:])[0]), fixed)
	}
	return ""
}

// Compile validates a kind built in Go or decoded from JSON (GET /v1/kinds) and builds its
// lookups. Kinds from Parse are already compiled.
func (k *Kind) Compile() error {
	if k.file == "" {
		k.file = "kind " + k.Name
	}
	k.loc = locator{file: k.file, kind: k.Name}
	if errs := k.compile(k.loc); len(errs) > 0 {
		return errs
	}
	return nil
}

// compile validates a kind on its own and builds its lookups.
func (k *Kind) compile(l locator) SpecErrors {
	var errs SpecErrors
	add := func(field, format string, args ...any) { errs = append(errs, l.err(field, format, args...)) }

	if k.Name == "" {
		add("name", "missing kind name")
	}
	if k.Collection == "" {
		add("collection", "missing collection (the URL path segment, e.g. machines)")
	} else if msg := collectionProblem(k.Collection); msg != "" {
		add("collection", "%s", msg)
	}
	// Final, error and gone states are static: a state listed there and nowhere else is
	// added to the static ones (listing it twice is allowed, never needed).
	implied := map[string]string{}
	for _, group := range []struct {
		name   string
		states []string
	}{{"final", k.States.Final}, {"error", k.States.Error}, {"gone", k.States.Gone}} {
		for i, s := range group.states {
			if !slices.Contains(k.States.Static, s) && !slices.Contains(k.States.Transition, s) {
				k.States.Static = append(k.States.Static, s)
				implied[s] = fmt.Sprintf("states.%s[%d]", group.name, i)
			}
		}
	}
	if len(k.States.Static) == 0 {
		add("states.static", "a kind needs at least one static state: write `states: {static: [A, B]}`")
	}
	k.kinds = map[string]stateKind{}
	for i, s := range k.States.Static {
		if k.kinds[s] != 0 {
			add(fmt.Sprintf("states.static[%d]", i), "duplicate state %q", s)
		}
		k.kinds[s] = stateStatic
	}
	for i, s := range k.States.Transition {
		if k.kinds[s] != 0 {
			add(fmt.Sprintf("states.transition[%d]", i), "duplicate state %q", s)
		}
		k.kinds[s] = stateTransition
	}
	staticRef := func(field, s string) {
		switch k.kinds[s] {
		case stateStatic:
		case stateTransition:
			add(field, "%q is a transition state; a static state is needed here", s)
		default:
			add(field, "unknown state %q%s; static states are %s", s, didYouMean(s, k.States.Static), listOrNone(k.States.Static))
		}
	}
	transRef := func(field, s string) {
		switch k.kinds[s] {
		case stateTransition:
		case stateStatic:
			add(field, "%q is a static state; a phase must be a transition state (list it under `states.transition`)", s)
		default:
			add(field, "unknown state %q%s; transition states are %s (list a new one under `states.transition`)", s, didYouMean(s, k.States.Transition), listOrNone(k.States.Transition))
		}
	}
	for _, group := range []struct {
		name   string
		states []string
	}{{"final", k.States.Final}, {"error", k.States.Error}, {"gone", k.States.Gone}} {
		for i, s := range group.states {
			staticRef(fmt.Sprintf("states.%s[%d]", group.name, i), s)
		}
	}
	if k.Initial != "" {
		staticRef("initial", k.Initial)
	}

	checkPhases := func(field string, via []Phase) {
		for i, p := range via {
			f := fmt.Sprintf("%s[%d]", field, i)
			transRef(f, p.State)
			if p.Actor != "" && !slices.Contains(validActors, p.Actor) {
				add(f+".actor", "unknown actor %q%s; actors are %s", p.Actor, didYouMean(string(p.Actor), actorNames()), actorList())
			}
		}
	}
	checkFailure := func(field string, f *Failure, hasOrigin bool) {
		checkPhases(field+".via", f.Via)
		switch {
		case f.Rollback && f.To != "":
			add(field, "a failure either rolls back or goes to a state, not both")
		case f.Rollback && !hasOrigin:
			add(field, "the create action starts from nothing, so its failure cannot roll back: give the create `failure: {to: <static state>}` (an error state, say), or give the kind an `initial:` state for the create to start from and roll back to")
		case f.To != "":
			staticRef(field+".to", f.To)
		case !f.Rollback && !f.Retry:
			add(field, "a failure needs `rollback: true`, `retry: true` or a `to` state")
		}
		if f.Fatal != "" {
			staticRef(field+".fatal", f.Fatal)
		}
	}
	if k.Failure.Rollback || k.Failure.To != "" || k.Failure.Retry || len(k.Failure.Via) > 0 || k.Failure.Fatal != "" {
		checkFailure("failure", &k.Failure, true)
	}

	if k.Create.Name == "" {
		k.Create.Name = "create"
	}
	if k.Initial != "" && len(k.Create.From) == 0 {
		k.Create.From = []string{k.Initial}
	}
	k.actions = map[string]*Action{}
	for i, a := range k.AllActions() {
		field := "create"
		if i > 0 {
			field = fmt.Sprintf("actions[%d]", i-1)
		}
		if a.Name == "" {
			add(field+".name", "missing action name")
		} else if k.actions[a.Name] != nil {
			add(field+".name", "duplicate action %q", a.Name)
		}
		k.actions[a.Name] = a
		if a.Actor != "" && !slices.Contains(validActors, a.Actor) {
			add(field+".actor", "unknown actor %q%s; actors are %s", a.Actor, didYouMean(string(a.Actor), actorNames()), actorList())
		}
		if i > 0 && len(a.From) == 0 && len(a.ForceFrom) == 0 && !a.FromAny {
			add(field+".from", "action %q has no `from` states (or `from_any: true`)", a.Name)
		}
		for j, s := range a.From {
			staticRef(fmt.Sprintf("%s.from[%d]", field, j), s)
		}
		for j, s := range a.ForceFrom {
			staticRef(fmt.Sprintf("%s.force_from[%d]", field, j), s)
		}
		checkPhases(field+".via", a.Via)
		switch {
		case a.Returns && a.To != "":
			add(field, "action %q both returns and names a `to` state", a.Name)
		case a.Returns && i == 0:
			add(field, "a create action cannot return to where it started")
		case a.Returns && a.FromAny:
			add(field, "action %q returns but may start from transition states", a.Name)
		case !a.Returns && a.To == "":
			add(field+".to", "action %q needs a `to` static state or `returns: true`", a.Name)
		case a.To != "":
			staticRef(field+".to", a.To)
		}
		if a.Failure != nil {
			checkFailure(field+".failure", a.Failure, i > 0 || k.Initial != "")
		} else if len(a.Via) > 0 && !(k.Failure.Rollback || k.Failure.To != "" || k.Failure.Retry) {
			add(field+".failure", "action %q passes through transition states, so it can fail, but neither it nor the kind says what a failure does: give the kind `failure: {rollback: true}` (back to where the action started) or `failure: {to: <static state>}`", a.Name)
		} else if i == 0 && k.Initial == "" && k.Failure.Rollback && len(a.Via) > 0 {
			add(field+".failure", "the create action starts from nothing, so the kind's `failure: {rollback: true}` cannot apply to it: give the create `failure: {to: <static state>}` (an error state, say), or give the kind an `initial:` state for the create to start from and roll back to")
		}
		if a.After > 0 && a.ByUser() {
			add(field+".after", "only system actions start automatically after a delay")
		}
		if a.At != "" && a.Actor != ActorTimer {
			add(field+".at", "only timer actions start at a time")
		}
		if a.Actor == ActorTimer && a.At == "" {
			add(field+".at", "timer action %q needs `at`: the field holding its start time", a.Name)
		}
	}
	if k.ForceAny {
		for _, a := range k.Actions {
			if !a.ByUser() || a.FromAny {
				continue
			}
			ai := k.actions[a.Name]
			ai.forced = nil
			for _, st := range k.States.Static {
				if !k.IsGone(st) && !k.IsFinal(st) && !slices.Contains(a.From, st) && !slices.Contains(a.ForceFrom, st) {
					ai.forced = append(ai.forced, st)
				}
			}
		}
	}
	for mode, names := range k.Deletion {
		if mode != "delete" && mode != "destroy" {
			add("deletion."+mode, "unknown deletion mode %q%s; modes are delete (to the recycle bin) and destroy (permanent)", mode, didYouMean(mode, []string{"delete", "destroy"}))
		}
		for i, n := range names {
			if k.actions[n] == nil {
				add(fmt.Sprintf("deletion.%s[%d]", mode, i), "unknown action %q%s", n, didYouMean(n, k.actionNames()))
			}
		}
	}
	if k.Update != "" && k.actions[k.Update] == nil {
		add("update", "unknown action %q%s", k.Update, didYouMean(k.Update, k.actionNames()))
	}
	k.compileRelations(add)
	if len(errs) > 0 {
		return errs
	}
	return k.checkGraph(l, implied)
}

// checkGraph finds transition states no action passes through and states nothing reaches.
// implied maps the static states that were listed only as final, error or gone states to
// where they were listed.
func (k *Kind) checkGraph(l locator, implied map[string]string) SpecErrors {
	var errs SpecErrors
	used := map[string]bool{}
	for _, a := range k.AllActions() {
		for _, p := range a.Via {
			used[p.State] = true
		}
		for _, p := range k.FailureRule(a).Via {
			used[p.State] = true
		}
	}
	for i, s := range k.States.Transition {
		if !used[s] {
			errs = append(errs, l.err(fmt.Sprintf("states.transition[%d]", i),
				"transition state %q has no exit: no action passes through it", s))
		}
	}

	reached := map[string]bool{}
	var queue []string
	visit := func(s string) {
		if s != "" && !reached[s] {
			reached[s] = true
			queue = append(queue, s)
		}
	}
	if k.Initial != "" {
		visit(k.Initial)
	} else {
		k.walkAction(&k.Create, "", visit)
	}
	if k.Derive != nil && k.Derive.State {
		// Any static state may be derived from the related objects.
		for _, s := range k.States.Static {
			visit(s)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, a := range k.AllActions() {
			if ok, _ := a.AllowedFrom(s); ok {
				k.walkAction(a, s, visit)
			}
		}
	}
	for i, s := range k.States.Static {
		if reached[s] {
			continue
		}
		if at, ok := implied[s]; ok {
			others := slices.DeleteFunc(k.allStates(), func(o string) bool { return o == s })
			errs = append(errs, l.err(at, "state %q is unreachable from the create action%s: no action or failure lands in it (name it as an action's `to` or a failure's `to`)", s, didYouMean(s, others)))
			continue
		}
		errs = append(errs, l.err(fmt.Sprintf("states.static[%d]", i), "state %q is unreachable from the create action: no action or failure lands in it (name it as an action's `to` or a failure's `to`, or remove it)", s))
	}
	return errs
}

// walkAction visits every state an action started from `from` can pass through or land in.
func (k *Kind) walkAction(a *Action, from string, visit func(string)) {
	for _, p := range a.Via {
		visit(p.State)
	}
	if a.Returns {
		visit(from)
	} else {
		visit(a.To)
	}
	f := k.FailureRule(a)
	if len(a.Via) == 0 {
		return // instant moves cannot fail
	}
	for _, p := range f.Via {
		visit(p.State)
	}
	switch {
	case f.Rollback:
		visit(from)
	case f.To != "":
		visit(f.To)
	}
	if f.Fatal != "" {
		visit(f.Fatal)
	}
}

func actorList() string { return strings.Join(actorNames(), ", ") }

func actorNames() []string {
	out := make([]string, len(validActors))
	for i, a := range validActors {
		out[i] = string(a)
	}
	return out
}

// actionNames lists the kind's action names, the create action first.
func (k *Kind) actionNames() []string {
	out := make([]string, 0, len(k.Actions)+1)
	for _, a := range k.AllActions() {
		out = append(out, a.Name)
	}
	return out
}

// Registry holds kinds by name and by collection.
type Registry struct {
	byName       map[string]*Kind
	byCollection map[string]*Kind
	order        []string
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byName: map[string]*Kind{}, byCollection: map[string]*Kind{}}
}

// Add validates cross-kind rules (unique names and collections, known parents and parent
// states) and adds the kinds. Nothing is added when an error is returned.
func (r *Registry) Add(kinds ...*Kind) error {
	var errs SpecErrors
	names := map[string]*Kind{}
	colls := map[string]*Kind{}
	for _, k := range kinds {
		if o := cmpOr(r.byName[k.Name], names[k.Name]); o != nil {
			errs = append(errs, k.loc.err("name", "duplicate kind name: %s is already a kind (%s); rename this one", k.Name, o.file))
		}
		if o := cmpOr(r.byCollection[k.Collection], colls[k.Collection]); o != nil {
			errs = append(errs, k.loc.err("collection", "collection %q is already used by kind %s; choose another URL path segment", k.Collection, o.Name))
		}
		names[k.Name] = k
		colls[k.Collection] = k
	}
	lookup := func(name string) *Kind {
		if k := names[name]; k != nil {
			return k
		}
		return r.byName[name]
	}
	known := slices.Clone(r.order)
	for _, k := range kinds {
		known = append(known, k.Name)
	}
	for _, k := range kinds {
		if k.Parent == nil {
			continue
		}
		p := lookup(k.Parent.Kind)
		if p == nil {
			errs = append(errs, k.loc.err("parent.kind", "unknown parent kind %q%s", k.Parent.Kind, didYouMean(k.Parent.Kind, known)))
			continue
		}
		check := func(field string, states []string) {
			for j, s := range states {
				if !p.IsStatic(s) {
					errs = append(errs, k.loc.err(fmt.Sprintf("%s[%d]", field, j), "%q is not a static state of parent kind %s%s", s, p.Name, didYouMean(s, p.States.Static)))
				}
			}
		}
		check("parent.in", k.Parent.States)
		for i, a := range k.AllActions() {
			field := "create"
			if i > 0 {
				field = fmt.Sprintf("actions[%d]", i-1)
			}
			check(field+".parent_in", a.ParentStates)
		}
		if cycle := parentCycle(k, lookup); cycle != nil {
			errs = append(errs, k.loc.err("parent.kind", "parents form a cycle: %s", strings.Join(cycle, " → ")))
		}
	}
	for _, k := range kinds {
		errs = append(errs, checkRelations(k, lookup, known)...)
	}
	if len(errs) > 0 {
		return errs
	}
	for _, k := range kinds {
		r.byName[k.Name] = k
		r.byCollection[k.Collection] = k
		r.order = append(r.order, k.Name)
	}
	return nil
}

// Kind returns the named kind.
func (r *Registry) Kind(name string) (*Kind, error) {
	if k := r.byName[name]; k != nil {
		return k, nil
	}
	return nil, &UnknownKindError{Kind: name, Known: r.Names()}
}

// ByCollection returns the kind served under a URL collection name.
func (r *Registry) ByCollection(collection string) (*Kind, bool) {
	k, ok := r.byCollection[collection]
	return k, ok
}

// Names returns the kind names, sorted.
func (r *Registry) Names() []string {
	out := slices.Clone(r.order)
	sort.Strings(out)
	return out
}

// Kinds returns every kind, sorted by name.
func (r *Registry) Kinds() []*Kind {
	names := r.Names()
	out := make([]*Kind, len(names))
	for i, n := range names {
		out[i] = r.byName[n]
	}
	return out
}
