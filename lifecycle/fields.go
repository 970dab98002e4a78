package lifecycle

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// FieldType is the type of a declared spec field.
type FieldType string

// The field types a spec may declare.
const (
	TypeString  FieldType = "string"
	TypeInteger FieldType = "integer"
	TypeNumber  FieldType = "number"
	TypeBool    FieldType = "bool"
	// TypeTime is an RFC 3339 time written as a string.
	TypeTime   FieldType = "time"
	TypeList   FieldType = "list"
	TypeObject FieldType = "object"
)

var fieldTypes = []FieldType{TypeString, TypeInteger, TypeNumber, TypeBool, TypeTime, TypeList, TypeObject}

// Limits every declared field has even when its spec names none, so no client can send an
// unbounded value.
const (
	DefaultMaxLength = 4096
	DefaultMaxItems  = 1000
)

// Field declares one spec field of a kind: the simulator validates requests against it (a 400
// names the field) and the provider builds its typed schema and plan-time checks from it.
type Field struct {
	Name        string    `yaml:"name" json:"name"`
	Type        FieldType `yaml:"type" json:"type"`
	Description string    `yaml:"description,omitempty" json:"description,omitempty"`
	// Required fields must be set at create.
	Required bool `yaml:"required,omitempty" json:"required,omitempty"`
	// Default is the value a create without the field gets.
	Default any `yaml:"default,omitempty" json:"default,omitempty"`
	// Enum lists the values a string may take.
	Enum []string `yaml:"enum,omitempty" json:"enum,omitempty"`
	// Min and Max bound numbers and integers.
	Min *float64 `yaml:"min,omitempty" json:"min,omitempty"`
	Max *float64 `yaml:"max,omitempty" json:"max,omitempty"`
	// MaxLength bounds a string (DefaultMaxLength when zero).
	MaxLength int `yaml:"max_length,omitempty" json:"max_length,omitempty"`
	// MinItems and MaxItems bound a list (MaxItems is DefaultMaxItems when zero).
	MinItems int `yaml:"min_items,omitempty" json:"min_items,omitempty"`
	MaxItems int `yaml:"max_items,omitempty" json:"max_items,omitempty"`
	// Items declares a list's elements.
	Items *Field `yaml:"items,omitempty" json:"items,omitempty"`
	// ItemName is what one item of a list is called (subgroup for subgroups): the Terraform
	// provider names the list's nested block after it. Empty means the field's name.
	ItemName string `yaml:"item_name,omitempty" json:"item_name,omitempty"`
	// Fields declares an object's fields.
	Fields []Field `yaml:"fields,omitempty" json:"fields,omitempty"`
	// After names a time field of the same object this time must be later than (end_date
	// after start_date).
	After string `yaml:"after,omitempty" json:"after,omitempty"`
	// PastIsNow makes a time in the past mean now (Blazar's start_date); an omitted one is
	// now too when the field has PastIsNow.
	PastIsNow bool `yaml:"past_is_now,omitempty" json:"past_is_now,omitempty"`
	// Immutable fields cannot change after create (a change needs a new object).
	Immutable bool `yaml:"immutable,omitempty" json:"immutable,omitempty"`
	// UpdatableIn lists the states an object must be in for a change of this field; empty
	// means any state its update runs from.
	UpdatableIn []string `yaml:"updatable_in,omitempty" json:"updatable_in,omitempty"`
}

// FieldError reports a spec value that does not match its declaration. Field is the path of
// the value ("reservations[1].min").
type FieldError struct {
	Kind, Field, Msg string
	// State is set when the value is fine but the object's state refuses the change.
	State string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: spec.%s: %s", e.Kind, e.Field, e.Msg)
}

// Field returns the declared field of that name.
func (k *Kind) Field(name string) (*Field, bool) {
	for i := range k.Fields {
		if k.Fields[i].Name == name {
			return &k.Fields[i], true
		}
	}
	return nil, false
}

// CheckSpec validates a create's spec against the kind's declared fields, filling defaults and
// normalising values (a past time that means now becomes now). Kinds that declare no fields
// accept any spec. It returns the first problem as a *FieldError.
func (k *Kind) CheckSpec(spec map[string]any, now time.Time) error {
	if len(k.Fields) == 0 {
		return nil
	}
	for i := range k.Fields {
		f := &k.Fields[i]
		if v, ok := spec[f.Name]; ok && v != nil {
			continue
		}
		// null is no value (JSON merge patch): the same as a missing field.
		delete(spec, f.Name)
		switch {
		case f.Default != nil:
			spec[f.Name] = f.Default
		case f.Type == TypeTime && f.PastIsNow:
			spec[f.Name] = now.UTC().Format(time.RFC3339)
		case f.Required:
			return &FieldError{Kind: k.Name, Field: f.Name, Msg: "is required" + f.hint()}
		}
	}
	return k.checkValues(spec, now, nil)
}

// CheckChange validates a change of spec fields (a PATCH or an action's params) on an object in
// state, whose spec after the change is merged. Null values remove a field.
func (k *Kind) CheckChange(state string, change, merged map[string]any, now time.Time) error {
	return k.CheckUpdate(state, nil, change, merged, now)
}

// CheckUpdate is CheckChange knowing the spec before the change (current): items of a list
// that keep their name may not change their immutable fields (a Savanna node group's flavor).
func (k *Kind) CheckUpdate(state string, current, change, merged map[string]any, now time.Time) error {
	if len(k.Fields) == 0 {
		return nil
	}
	for _, name := range sortedKeys(change) {
		f, ok := k.Field(name)
		if !ok {
			if k.ExtraFields {
				continue
			}
			return k.unknownField(name)
		}
		if f.Immutable {
			return &FieldError{Kind: k.Name, Field: name, Msg: "cannot change after create; make a new object instead"}
		}
		if len(f.UpdatableIn) > 0 && !slices.Contains(f.UpdatableIn, state) {
			return &FieldError{Kind: k.Name, Field: name, State: state,
				Msg: fmt.Sprintf("can change only while the object is %s; it is %s", orList(f.UpdatableIn), state)}
		}
		if change[name] == nil {
			if msg := f.cannotRemove(); msg != "" {
				return &FieldError{Kind: k.Name, Field: name, Msg: msg}
			}
			if f.Default != nil && merged != nil {
				// Removed, a field with a default holds it again, as after a create without it.
				change[name], merged[name] = f.Default, f.Default
			}
		}
		if err := f.checkItemsImmutable(name, current[name], change[name]); err != nil {
			err.Kind = k.Name
			return err
		}
	}
	// Only the changed fields are normalised: a start that meant now stays when it is now past.
	return k.checkValues(merged, now, change)
}

// cannotRemove says why a null (JSON merge patch: remove) is refused for a field every object
// of the kind holds — required, or a time that an omitted value makes now — or "" when the
// field may go (one with a default goes back to it). Removing one would leave an object a
// create could not make (a pending lease without a start never starts).
func (f *Field) cannotRemove() string {
	switch {
	case f.Required:
		return "is required and cannot be removed: send a new value instead of null"
	case f.Type == TypeTime && f.PastIsNow:
		return "always has a value and cannot be removed: send a new time instead of null (a time in the past means now)"
	}
	return ""
}

func (k *Kind) unknownField(name string) error {
	names := make([]string, len(k.Fields))
	for i, f := range k.Fields {
		names[i] = f.Name
	}
	return &FieldError{Kind: k.Name, Field: name, Msg: "unknown field; fields are " + strings.Join(names, ", ")}
}

// checkValues checks every value of a whole spec, including the cross-field After rule, and
// normalises the values of the fields in only (all of them when only is nil).
func (k *Kind) checkValues(spec map[string]any, now time.Time, only map[string]any) error {
	for _, name := range sortedKeys(spec) {
		f, ok := k.Field(name)
		if !ok {
			if k.ExtraFields {
				continue
			}
			return k.unknownField(name)
		}
		v, err := f.check(name, spec[name], now)
		if err != nil {
			err.Kind = k.Name
			return err
		}
		if _, changed := only[name]; only == nil || changed {
			spec[name] = v
		}
	}
	for i := range k.Fields {
		f := &k.Fields[i]
		if f.After == "" {
			continue
		}
		t, ok1 := TimeValue(spec[f.Name])
		other, ok2 := TimeValue(spec[f.After])
		if ok1 && ok2 && !t.After(other) {
			return &FieldError{Kind: k.Name, Field: f.Name, Msg: fmt.Sprintf("must be after %s (%s)", f.After, spec[f.After])}
		}
	}
	return nil
}

// zoneOffsetInRange reports whether the zone offset of s, an RFC 3339 time time.Parse took,
// is one RFC 3339 allows: Z, or ±HH:MM with HH 00 to 23 and MM 00 to 59. time.Parse takes
// offsets up to +99:99, which time's encoders refuse (or write as another offset): such a
// value would be accepted here and fail later, where the worker stores the time it names.
// It also returns the offset, for the message.
func zoneOffsetInRange(s string) (string, bool) {
	if strings.HasSuffix(s, "Z") || strings.HasSuffix(s, "z") {
		return "Z", true
	}
	if len(s) < 6 {
		return s, false
	}
	off := s[len(s)-6:]
	if (off[0] != '+' && off[0] != '-') || off[3] != ':' {
		return off, false
	}
	h, err1 := strconv.Atoi(off[1:3])
	m, err2 := strconv.Atoi(off[4:6])
	return off, err1 == nil && err2 == nil && h <= 23 && m <= 59
}

// encodes reports whether t survives the encodings the stores give the times they keep (its
// own offset and UTC, as text and JSON), so a time accepted here is never refused at a save.
func encodes(t time.Time) bool {
	for _, v := range []time.Time{t, t.UTC()} {
		if _, err := v.MarshalJSON(); err != nil {
			return false
		}
		if _, err := v.MarshalText(); err != nil {
			return false
		}
	}
	return true
}

// TimeValue reads an RFC 3339 time held in a spec value.
func TimeValue(v any) (time.Time, bool) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}

func (f *Field) hint() string {
	if f.Description == "" {
		return ""
	}
	return ": " + f.Description
}

// check validates one value at path and returns it normalised (integers as int64-valued
// float64 as JSON gives them, past times as now).
func (f *Field) check(path string, v any, now time.Time) (any, *FieldError) {
	bad := func(format string, args ...any) (any, *FieldError) {
		return nil, &FieldError{Field: path, Msg: fmt.Sprintf(format, args...)}
	}
	if v == nil {
		return nil, nil
	}
	switch f.Type {
	case TypeString:
		s, ok := v.(string)
		if !ok {
			return bad("must be a string")
		}
		if limit := cmp0(f.MaxLength, DefaultMaxLength); len(s) > limit {
			return bad("is %d bytes long; at most %d are allowed", len(s), limit)
		}
		if len(f.Enum) > 0 && !slices.Contains(f.Enum, s) {
			return bad("%q is not one of %s", s, strings.Join(f.Enum, ", "))
		}
		return s, nil
	case TypeTime:
		s, ok := v.(string)
		if !ok {
			return bad("must be an RFC 3339 time string such as 2030-01-02T15:04:05Z")
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return bad("%q is not an RFC 3339 time (write it like 2030-01-02T15:04:05Z)", truncate(s))
		}
		if off, ok := zoneOffsetInRange(s); !ok {
			return bad("%q has the zone offset %s, out of range: hours 00 to 23 and minutes 00 to 59 are allowed (write +HH:MM, or Z for UTC)", s, off)
		}
		if t.Year() < 1970 || t.Year() > 9999 || !encodes(t) {
			return bad("%q is out of range: years 1970 to 9999 are allowed (also once converted to UTC)", s)
		}
		if f.PastIsNow && t.Before(now) {
			return now.UTC().Format(time.RFC3339), nil
		}
		return s, nil
	case TypeBool:
		if _, ok := v.(bool); !ok {
			return bad("must be true or false")
		}
		return v, nil
	case TypeInteger, TypeNumber:
		n, ok := number(v)
		if !ok {
			return bad("must be a number")
		}
		if f.Type == TypeInteger && (n != math.Trunc(n) || math.Abs(n) > 1<<53) {
			return bad("must be a whole number")
		}
		if f.Min != nil && n < *f.Min {
			return bad("is %v; the minimum is %v", n, *f.Min)
		}
		if f.Max != nil && n > *f.Max {
			return bad("is %v; the maximum is %v", n, *f.Max)
		}
		return n, nil
	case TypeList:
		items, ok := v.([]any)
		if !ok {
			return bad("must be a list")
		}
		if limit := cmp0(f.MaxItems, DefaultMaxItems); len(items) > limit {
			return bad("has %d items; at most %d are allowed", len(items), limit)
		}
		if len(items) < f.MinItems {
			return bad("has %d items; at least %d are needed", len(items), f.MinItems)
		}
		out := make([]any, len(items))
		for i, it := range items {
			if it == nil {
				return nil, &FieldError{Field: fmt.Sprintf("%s[%d]", path, i), Msg: "is null; a list item must be a value"}
			}
			if f.Items == nil {
				out[i] = it
				continue
			}
			nv, err := f.Items.check(fmt.Sprintf("%s[%d]", path, i), it, now)
			if err != nil {
				return nil, err
			}
			out[i] = nv
		}
		return out, nil
	case TypeObject:
		m, ok := v.(map[string]any)
		if !ok {
			return bad("must be an object")
		}
		if len(f.Fields) == 0 {
			return m, nil
		}
		out := make(map[string]any, len(m))
		for _, sub := range f.Fields {
			// null is no value: the same as a missing field.
			if v, ok := m[sub.Name]; !ok || v == nil {
				switch {
				case sub.Default != nil:
					out[sub.Name] = sub.Default
				case sub.Required:
					return bad("%s is required%s", sub.Name, sub.hint())
				}
			}
		}
		for _, name := range sortedKeys(m) {
			sub := f.sub(name)
			if sub == nil {
				names := make([]string, len(f.Fields))
				for i, s := range f.Fields {
					names[i] = s.Name
				}
				return nil, &FieldError{Field: path + "." + name, Msg: "unknown field; fields are " + strings.Join(names, ", ")}
			}
			if m[name] == nil {
				continue // no value (a default, if any, is set above)
			}
			nv, err := sub.check(path+"."+name, m[name], now)
			if err != nil {
				return nil, err
			}
			out[name] = nv
		}
		return out, nil
	}
	return v, nil
}

// NeedsNew reports whether a change of spec fields cannot apply in place: it changes a field
// that cannot change after create, or an immutable field of a list item that keeps its name.
// Terraform plans such a change as a replacement.
func (k *Kind) NeedsNew(current, change map[string]any) bool {
	for name, v := range change {
		f, ok := k.Field(name)
		if !ok {
			continue
		}
		if f.Immutable || f.checkItemsImmutable(name, current[name], v) != nil {
			return true
		}
	}
	return false
}

// checkItemsImmutable refuses a change of a list of objects that changes an immutable field of
// an item that keeps its name.
func (f *Field) checkItemsImmutable(path string, before, after any) *FieldError {
	if f.Type != TypeList || f.Items == nil || f.Items.Type != TypeObject {
		return nil
	}
	old, _ := before.([]any)
	next, _ := after.([]any)
	byName := map[string]map[string]any{}
	for _, it := range old {
		if m, ok := it.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				byName[n] = m
			}
		}
	}
	for _, it := range next {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		n, _ := m["name"].(string)
		prev, ok := byName[n]
		if !ok {
			continue
		}
		for _, sub := range f.Items.Fields {
			if sub.Immutable && fmt.Sprint(prev[sub.Name]) != fmt.Sprint(m[sub.Name]) {
				return &FieldError{Field: fmt.Sprintf("%s[%s].%s", path, n, sub.Name),
					Msg: "cannot change in place; use another name for a new item, or make a new object"}
			}
		}
	}
	return nil
}

func (f *Field) sub(name string) *Field {
	for i := range f.Fields {
		if f.Fields[i].Name == name {
			return &f.Fields[i]
		}
	}
	return nil
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, !math.IsNaN(n) && !math.IsInf(n, 0)
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

func cmp0(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Defaulted lists the paths of the values a check filled in (declared defaults, and a time an
// omitted value makes now): those checked holds where written, the spec as a client wrote it,
// has no value (null is none). Paths name fields as errors do: size, parts[0].grade,
// settings.mode; they are sorted. Lists are compared item by item.
func Defaulted(written, checked map[string]any) []string {
	out := []string{}
	filled("", written, checked, &out)
	slices.Sort(out)
	return out
}

func filled(prefix string, written, checked map[string]any, out *[]string) {
	for name, c := range checked {
		at := name
		if prefix != "" {
			at = prefix + "." + name
		}
		w, ok := written[name]
		if !ok || w == nil {
			if c != nil {
				*out = append(*out, at)
			}
			continue
		}
		filledValue(at, w, c, out)
	}
}

func filledValue(at string, w, c any, out *[]string) {
	switch c := c.(type) {
	case map[string]any:
		if wm, ok := w.(map[string]any); ok {
			filled(at, wm, c, out)
		}
	case []any:
		if wl, ok := w.([]any); ok && len(wl) == len(c) {
			for i := range c {
				filledValue(fmt.Sprintf("%s[%d]", at, i), wl[i], c[i], out)
			}
		}
	}
}

// WithoutPaths is a deep copy of spec without the values at paths (as Defaulted writes
// them): the spec as its writer wrote it, when paths are the ones filled in.
func WithoutPaths(spec map[string]any, paths []string) map[string]any {
	drop := make(map[string]bool, len(paths))
	for _, p := range paths {
		drop[p] = true
	}
	return withoutPaths("", spec, drop)
}

func withoutPaths(prefix string, m map[string]any, drop map[string]bool) map[string]any {
	out := make(map[string]any, len(m))
	for name, v := range m {
		at := name
		if prefix != "" {
			at = prefix + "." + name
		}
		if drop[at] {
			continue
		}
		out[name] = withoutPathsValue(at, v, drop)
	}
	return out
}

func withoutPathsValue(at string, v any, drop map[string]bool) any {
	switch v := v.(type) {
	case map[string]any:
		return withoutPaths(at, v, drop)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = withoutPathsValue(fmt.Sprintf("%s[%d]", at, i), e, drop)
		}
		return out
	}
	return v
}

// Filled is the value field name holds when a spec sets it to v, as a check fills it in: a
// null gives the field's default, a list's items and an object get their fields' defaults.
// ok is false for an undeclared field or a value the check refuses.
func (k *Kind) Filled(name string, v any, now time.Time) (any, bool) {
	f, ok := k.Field(name)
	if !ok {
		return nil, false
	}
	if v == nil {
		return f.Default, f.Default != nil
	}
	out, err := f.check(name, v, now)
	return out, err == nil
}
