package lifecycle

import (
	"time"
)

// SampleSpec returns a minimal valid spec for the kind: its required fields (and the fields
// they are checked against) with sample values, times an hour apart from now. Tests and
// examples start from it.
func (k *Kind) SampleSpec(now time.Time) map[string]any {
	spec := map[string]any{}
	for i := range k.Fields {
		f := &k.Fields[i]
		if f.Required || k.isAfterOf(f.Name) {
			spec[f.Name] = f.sample(now)
		}
	}
	// Times after another field follow it.
	for i := range k.Fields {
		f := &k.Fields[i]
		if f.After == "" {
			continue
		}
		base := now
		if t, ok := TimeValue(spec[f.After]); ok {
			base = t
		}
		spec[f.Name] = base.Add(time.Hour).UTC().Format(time.RFC3339)
	}
	return spec
}

func (k *Kind) isAfterOf(name string) bool {
	for _, f := range k.Fields {
		if f.After == name {
			return true
		}
	}
	return false
}

func (f *Field) sample(now time.Time) any {
	if f.Default != nil {
		return f.Default
	}
	switch f.Type {
	case TypeString:
		if len(f.Enum) > 0 {
			return f.Enum[0]
		}
		return "sample"
	case TypeInteger, TypeNumber:
		if f.Min != nil && *f.Min > 1 {
			return *f.Min
		}
		return 1.0
	case TypeBool:
		return false
	case TypeTime:
		return now.Add(time.Hour).UTC().Format(time.RFC3339)
	case TypeList:
		if f.Items == nil {
			return []any{}
		}
		n := max(f.MinItems, 1)
		out := make([]any, n)
		for i := range out {
			out[i] = f.Items.sample(now)
		}
		return out
	case TypeObject:
		obj := map[string]any{}
		for i := range f.Fields {
			if sub := &f.Fields[i]; sub.Required {
				obj[sub.Name] = sub.sample(now)
			}
		}
		return obj
	}
	return nil
}
