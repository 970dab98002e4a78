package lifecycle

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// compileFields validates field declarations (names, types, bounds, nested fields).
func compileFields(add func(field, format string, args ...any), prefix string, fields []Field, times []string) {
	seen := map[string]bool{}
	for i := range fields {
		f := &fields[i]
		at := fmt.Sprintf("%s[%d]", prefix, i)
		if f.Name == "" {
			add(at+".name", "missing field name")
		} else if seen[f.Name] {
			add(at+".name", "duplicate field %q", f.Name)
		}
		seen[f.Name] = true
		compileField(add, at, f)
		if f.ItemName != "" {
			switch {
			case f.Type != TypeList:
				add(at+".item_name", "only lists name their items; %s is a %s", f.Name, f.Type)
			case prefix != "fields":
				add(at+".item_name", "only a kind's own list fields name their items, not nested ones; remove it")
			}
			if f.ItemName != f.Name && slices.ContainsFunc(fields, func(o Field) bool { return o.Name == f.ItemName || (o.Name != f.Name && o.ItemName == f.ItemName) }) {
				add(at+".item_name", "item name %q is taken by another field; choose another", f.ItemName)
			}
		}
		if f.After != "" && !slices.Contains(times, f.After) {
			add(at+".after", "%q is not a time field of the same object", f.After)
		}
	}
}

func compileField(add func(field, format string, args ...any), at string, f *Field) {
	if !slices.Contains(fieldTypes, f.Type) {
		if f.Type == "" {
			add(at+".type", "field %q needs a `type`: one of %s", f.Name, fieldTypeList())
			return
		}
		add(at+".type", "unknown type %q%s; types are %s", f.Type, didYouMean(string(f.Type), fieldTypeAliases(string(f.Type))), fieldTypeList())
		return
	}
	if f.Min != nil && f.Max != nil && *f.Min > *f.Max {
		add(at+".min", "min %v is above max %v", *f.Min, *f.Max)
	}
	if (f.Min != nil || f.Max != nil) && f.Type != TypeInteger && f.Type != TypeNumber {
		add(at+".min", "min and max bound numbers; %s is a %s", f.Name, f.Type)
	}
	if len(f.Enum) > 0 && f.Type != TypeString {
		add(at+".enum", "enum lists string values; %s is a %s", f.Name, f.Type)
	}
	if f.After != "" && f.Type != TypeTime {
		add(at+".after", "only time fields can be after another")
	}
	if f.PastIsNow && f.Type != TypeTime {
		add(at+".past_is_now", "only time fields can mean now")
	}
	if f.Items != nil && f.Type != TypeList {
		add(at+".items", "only lists have items")
	}
	if len(f.Fields) > 0 && f.Type != TypeObject {
		add(at+".fields", "only objects have fields")
	}
	if f.Type == TypeList && f.Items != nil {
		compileField(add, at+".items", f.Items)
	}
	if f.Type == TypeObject {
		var times []string
		for _, s := range f.Fields {
			if s.Type == TypeTime {
				times = append(times, s.Name)
			}
		}
		compileFields(add, at+".fields", f.Fields, times)
	}
	if f.Default != nil {
		if _, err := f.check(f.Name, normaliseYAML(f.Default), time.Time{}); err != nil {
			add(at+".default", "default does not match the field: %s", err.Msg)
		} else {
			f.Default = normaliseYAML(f.Default)
		}
	}
}

// normaliseYAML turns values decoded from YAML (ints, map[string]any) into their JSON shapes,
// so defaults compare and validate like request values.
func normaliseYAML(v any) any {
	switch x := v.(type) {
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normaliseYAML(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normaliseYAML(e)
		}
		return out
	}
	return v
}

func fieldTypeList() string {
	out := make([]string, len(fieldTypes))
	for i, t := range fieldTypes {
		out[i] = string(t)
	}
	return strings.Join(out, ", ")
}

// typeSynonyms are the names other formats give the field types (JSON Schema, Go, Terraform).
var typeSynonyms = map[string]FieldType{
	"boolean": TypeBool, "int": TypeInteger, "int64": TypeInteger, "float": TypeNumber, "float64": TypeNumber,
	"double": TypeNumber, "str": TypeString, "text": TypeString, "array": TypeList, "map": TypeObject,
	"datetime": TypeTime, "date-time": TypeTime, "timestamp": TypeTime, "date": TypeTime, "set": TypeList,
}

// fieldTypeAliases returns the candidates "did you mean" looks among for type t: the type a
// synonym stands for, or every type.
func fieldTypeAliases(t string) []string {
	if ft, ok := typeSynonyms[strings.ToLower(t)]; ok {
		return []string{string(ft)}
	}
	out := make([]string, len(fieldTypes))
	for i, ft := range fieldTypes {
		out[i] = string(ft)
	}
	return out
}
