package lifecycle

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var fieldsNow = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func TestCheckSpec(t *testing.T) {
	in := func(d time.Duration) string { return fieldsNow.Add(d).Format(time.RFC3339) }
	host := map[string]any{"resource_type": "physical:host", "min": 1.0, "max": 2.0}
	tests := []struct {
		name  string
		kind  string
		give  map[string]any
		field string // "" when valid
		msg   string
	}{
		{"lease", "lease", map[string]any{"start_date": in(time.Hour), "end_date": in(2 * time.Hour), "reservations": []any{host}}, "", ""},
		{"lease without start", "lease", map[string]any{"end_date": in(time.Hour)}, "", ""},
		{"end missing", "lease", map[string]any{"start_date": in(time.Hour)}, "end_date", "is required: When the lease ends"},
		{"end before start", "lease", map[string]any{"start_date": in(2 * time.Hour), "end_date": in(time.Hour)}, "end_date", "must be after start_date"},
		{"end equal to start", "lease", map[string]any{"start_date": in(time.Hour), "end_date": in(time.Hour)}, "end_date", "must be after start_date"},
		{"not a time", "lease", map[string]any{"end_date": "soon"}, "end_date", `"soon" is not an RFC 3339 time`},
		{"time not a string", "lease", map[string]any{"end_date": 3.0}, "end_date", "must be an RFC 3339 time string"},
		{"year 1969", "lease", map[string]any{"end_date": "1969-01-01T00:00:00Z"}, "end_date", "years 1970 to 9999"},
		{"year 10000 in UTC", "lease", map[string]any{"end_date": "9999-12-31T23:00:00-05:00"}, "end_date", "also once converted to UTC"},
		// time.Parse takes these offsets; time's encoders (the store's) refuse them.
		{"offset +24:00", "lease", map[string]any{"end_date": "2030-01-02T15:04:05+24:00"}, "end_date", "zone offset +24:00, out of range: hours 00 to 23 and minutes 00 to 59"},
		{"offset -24:00", "lease", map[string]any{"end_date": "2030-01-02T15:04:05-24:00"}, "end_date", "zone offset -24:00, out of range"},
		{"offset +24:30", "lease", map[string]any{"start_date": "2030-01-02T15:04:05+24:30", "end_date": in(time.Hour)}, "start_date", "zone offset +24:30, out of range"},
		{"offset +23:60", "lease", map[string]any{"end_date": "2030-01-02T15:04:05+23:60"}, "end_date", "zone offset +23:60, out of range"},
		{"offset +23:59", "lease", map[string]any{"end_date": "2030-01-03T15:04:05+23:59"}, "", ""},
		{"offset -00:00", "lease", map[string]any{"end_date": "2030-01-02T15:04:05-00:00"}, "", ""},
		{"unknown field", "lease", map[string]any{"end_date": in(time.Hour), "nodes": 3.0}, "nodes", "unknown field; fields are start_date, end_date, reservations"},
		{"list of the wrong type", "lease", map[string]any{"end_date": in(time.Hour), "reservations": "all"}, "reservations", "must be a list"},
		{"item not an object", "lease", map[string]any{"end_date": in(time.Hour), "reservations": []any{"host"}}, "reservations[0]", "must be an object"},
		{"item field missing", "lease", map[string]any{"end_date": in(time.Hour), "reservations": []any{map[string]any{"min": 1.0}}}, "reservations[0]", "resource_type is required"},
		{"item unknown field", "lease", map[string]any{"end_date": in(time.Hour), "reservations": []any{map[string]any{"resource_type": "physical:host", "gpus": 1.0}}}, "reservations[0].gpus", "unknown field"},
		{"item below min", "lease", map[string]any{"end_date": in(time.Hour), "reservations": []any{map[string]any{"resource_type": "physical:host", "min": 0.0}}}, "reservations[0].min", "the minimum is 1"},
		{"item above max", "lease", map[string]any{"end_date": in(time.Hour), "reservations": []any{map[string]any{"resource_type": "physical:host", "max": 5000.0}}}, "reservations[0].max", "the maximum is 1000"},
		{"item not whole", "lease", map[string]any{"end_date": in(time.Hour), "reservations": []any{map[string]any{"resource_type": "physical:host", "min": 1.5}}}, "reservations[0].min", "whole number"},
		{"item not a number", "lease", map[string]any{"end_date": in(time.Hour), "reservations": []any{map[string]any{"resource_type": "physical:host", "min": "one"}}}, "reservations[0].min", "must be a number"},
		{"item enum", "lease", map[string]any{"end_date": in(time.Hour), "reservations": []any{map[string]any{"resource_type": "gpu"}}}, "reservations[0].resource_type", `"gpu" is not one of`},
		{"item bool", "lease", map[string]any{"end_date": in(time.Hour), "reservations": []any{map[string]any{"resource_type": "virtual:instance", "affinity": "yes"}}}, "reservations[0].affinity", "true or false"},
		{"string not a string", "lease", map[string]any{"end_date": in(time.Hour), "reservations": []any{map[string]any{"resource_type": 3.0}}}, "reservations[0].resource_type", "must be a string"},
		{"string too long", "mci", map[string]any{"subgroups": []any{map[string]any{"name": strings.Repeat("x", 65), "csp": "aws", "region": "r"}}}, "subgroups[0].name", "at most 64"},
		{"too few items", "mci", map[string]any{"subgroups": []any{}}, "subgroups", "at least 1"},
		{"too many items", "lease", map[string]any{"end_date": in(time.Hour), "reservations": make([]any, 101)}, "reservations", "at most 100"},
		{"mci", "mci", map[string]any{"subgroups": []any{map[string]any{"name": "web", "csp": "aws", "region": "us-east-1"}}}, "", ""},
		{"kind without fields takes anything", "account", map[string]any{"memory": 2048.0, "whatever": []any{1.0}}, "", ""},
		{"extra fields kept", "machine", map[string]any{"image_id": "img", "memory": 2048.0}, "", ""},
		{"declared field checked beside extra ones", "machine", map[string]any{"image_id": "img", "vcpus": 0.0, "memory": 2048.0}, "vcpus", "the minimum is 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := mustKind(t, tt.kind)
			err := k.CheckSpec(tt.give, fieldsNow)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("CheckSpec = %v, want nil", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field || !strings.Contains(fe.Msg, tt.msg) || fe.Kind != tt.kind {
				t.Fatalf("CheckSpec = %v, want %s: spec.%s: ~%q", err, tt.kind, tt.field, tt.msg)
			}
			if !strings.Contains(err.Error(), "spec."+tt.field) {
				t.Errorf("Error() = %q does not name spec.%s", err, tt.field)
			}
		})
	}
}

func TestCheckSpecFillsDefaultsAndNow(t *testing.T) {
	spec := map[string]any{"end_date": fieldsNow.Add(time.Hour).Format(time.RFC3339)}
	if err := mustKind(t, "lease").CheckSpec(spec, fieldsNow); err != nil {
		t.Fatal(err)
	}
	if spec["start_date"] != fieldsNow.Format(time.RFC3339) {
		t.Errorf("omitted start_date = %v, want now", spec["start_date"])
	}
	past := map[string]any{"start_date": "2001-01-01T00:00:00Z", "end_date": fieldsNow.Add(time.Hour).Format(time.RFC3339)}
	if err := mustKind(t, "lease").CheckSpec(past, fieldsNow); err != nil || past["start_date"] != fieldsNow.Format(time.RFC3339) {
		t.Errorf("past start_date = %v (%v), want now", past["start_date"], err)
	}
	mci := map[string]any{"subgroups": []any{map[string]any{"name": "web", "csp": "aws", "region": "r"}}}
	if err := mustKind(t, "mci").CheckSpec(mci, fieldsNow); err != nil {
		t.Fatal(err)
	}
	if got := mci["subgroups"].([]any)[0].(map[string]any)["count"]; got != 1.0 {
		t.Errorf("subgroup count default = %v, want 1", got)
	}
	cl := map[string]any{}
	if err := mustKind(t, "cloudlet").CheckSpec(cl, fieldsNow); err != nil || cl["version"] != "1.0" || cl["num_dynamic_ips"] != 10.0 {
		t.Errorf("cloudlet defaults = %v (%v)", cl, err)
	}
}

func TestCheckChange(t *testing.T) {
	lease := mustKind(t, "lease")
	base := map[string]any{"start_date": fieldsNow.Format(time.RFC3339), "end_date": fieldsNow.Add(time.Hour).Format(time.RFC3339)}
	merged := func(change map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range change {
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		return m
	}
	tests := []struct {
		name    string
		state   string
		change  map[string]any
		field   string
		inState bool
		msg     string
	}{
		{"move the end of an active lease", "ACTIVE", map[string]any{"end_date": fieldsNow.Add(2 * time.Hour).Format(time.RFC3339)}, "", false, ""},
		{"move the start of a pending lease", "PENDING", map[string]any{"start_date": fieldsNow.Add(30 * time.Minute).Format(time.RFC3339)}, "", false, ""},
		{"move the start of an active lease", "ACTIVE", map[string]any{"start_date": fieldsNow.Format(time.RFC3339)}, "start_date", true, "only while the object is PENDING; it is ACTIVE"},
		{"reservations are immutable", "PENDING", map[string]any{"reservations": []any{}}, "reservations", false, "cannot change after create"},
		{"a required field cannot go", "PENDING", map[string]any{"end_date": nil}, "end_date", false, "cannot be removed"},
		// An omitted start is now at create; a null later would leave a lease that never starts.
		{"a start that is now when omitted cannot go", "PENDING", map[string]any{"start_date": nil}, "start_date", false, "cannot be removed: send a new time instead of null"},
		{"a time at an offset past 23:59", "PENDING", map[string]any{"end_date": "2030-01-02T15:04:05+24:00"}, "end_date", false, "out of range"},
		{"unknown field", "PENDING", map[string]any{"colour": "red"}, "colour", false, "unknown field"},
		{"end before start", "PENDING", map[string]any{"end_date": fieldsNow.Add(-time.Hour).Format(time.RFC3339)}, "end_date", false, "must be after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := lease.CheckChange(tt.state, tt.change, merged(tt.change), fieldsNow)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("CheckChange = %v", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field || (fe.State != "") != tt.inState || !strings.Contains(fe.Msg, tt.msg) {
				t.Fatalf("CheckChange = %#v, want spec.%s ~%q (state refusal %v)", err, tt.field, tt.msg, tt.inState)
			}
		})
	}
	if err := mustKind(t, "machine").CheckChange("RUNNING", map[string]any{"x": 1.0}, map[string]any{"x": 1.0}, fieldsNow); err != nil {
		t.Errorf("a kind without fields refused a change: %v", err)
	}
}

// A null cannot remove a field every object holds (one with a default goes back to it), and a
// time's offset is checked, at any depth of a change: inside a list's objects, inside an object.
func TestCheckChangeAtDepth(t *testing.T) {
	k := mustParse(t, `
kinds:
  - name: rota
    collection: rotas
    states: {static: [READY]}
    create: {to: READY}
    fields:
      - {name: size, type: integer, default: 3}
      - name: shifts
        type: list
        items:
          type: object
          fields:
            - {name: who, type: string, required: true}
            - {name: from, type: time}
      - name: window
        type: object
        fields:
          - {name: opens, type: time, required: true}
`)
	shift := func(who, from any) map[string]any { return map[string]any{"who": who, "from": from} }
	current := map[string]any{"size": 3.0, "shifts": []any{shift("ann", "2030-01-02T15:04:05Z")}, "window": map[string]any{"opens": "2030-01-02T15:04:05Z"}}
	tests := []struct {
		name   string
		change map[string]any
		field  string // "" when valid
		msg    string
	}{
		{"a defaulted field goes back to its default", map[string]any{"size": nil}, "", ""},
		{"a required member of a list item cannot go", map[string]any{"shifts": []any{shift(nil, "2030-01-02T15:04:05Z")}}, "shifts[0]", "who is required"},
		{"a required member of an object cannot go", map[string]any{"window": map[string]any{"opens": nil}}, "window", "opens is required"},
		{"an optional member may go", map[string]any{"shifts": []any{shift("ann", nil)}}, "", ""},
		{"an offset past 23:59 in a list item", map[string]any{"shifts": []any{shift("ann", "2030-01-02T15:04:05-24:00")}}, "shifts[0].from", "zone offset -24:00, out of range"},
		{"an offset past 23:59 in an object", map[string]any{"window": map[string]any{"opens": "2030-01-02T15:04:05+23:60"}}, "window.opens", "zone offset +23:60, out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			merged := map[string]any{}
			for k, v := range current {
				merged[k] = v
			}
			for k, v := range tt.change {
				if v == nil {
					delete(merged, k)
				} else {
					merged[k] = v
				}
			}
			err := k.CheckUpdate("READY", current, tt.change, merged, fieldsNow)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("CheckUpdate = %v, want nil", err)
				}
				if _, removed := tt.change["size"]; removed && (merged["size"] != 3.0 || tt.change["size"] != 3.0) {
					t.Errorf("size after its null = %v (change %v), want its default 3", merged["size"], tt.change["size"])
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field || !strings.Contains(fe.Msg, tt.msg) {
				t.Fatalf("CheckUpdate = %v, want spec.%s: ~%q", err, tt.field, tt.msg)
			}
		})
	}
}

// Every built-in kind's sample spec is valid, and names every required field.
func TestSampleSpec(t *testing.T) {
	for _, k := range builtin.Kinds() {
		spec := k.SampleSpec(fieldsNow)
		if err := k.CheckSpec(spec, fieldsNow); err != nil {
			t.Errorf("%s: sample spec %v is invalid: %v", k.Name, spec, err)
		}
		for _, f := range k.Fields {
			if _, ok := spec[f.Name]; f.Required && !ok {
				t.Errorf("%s: sample spec lacks required %s", k.Name, f.Name)
			}
		}
	}
	lease := mustKind(t, "lease").SampleSpec(fieldsNow)
	start, _ := TimeValue(lease["start_date"])
	end, _ := TimeValue(lease["end_date"])
	if !end.After(start) {
		t.Errorf("sample lease ends %v, before its start %v", end, start)
	}
}

func TestTimeValue(t *testing.T) {
	if got, ok := TimeValue("2030-01-02T03:04:05Z"); !ok || !got.Equal(fieldsNow) {
		t.Errorf("TimeValue = %v, %v", got, ok)
	}
	for _, bad := range []any{nil, 3.0, "tomorrow"} {
		if _, ok := TimeValue(bad); ok {
			t.Errorf("TimeValue(%v) ok", bad)
		}
	}
}

func TestFieldDefaultsNormalised(t *testing.T) {
	kinds, err := Parse("f.yaml", []byte(`kinds:
  - name: box
    collection: boxes
    states: {static: [A]}
    create: {to: A}
    fields:
      - {name: size, type: integer, default: 3}
      - {name: tags, type: list, default: [1, 2], items: {type: integer}}
      - {name: meta, type: object, default: {a: 1}}
      - {name: ratio, type: number, default: 0.5}
`))
	if err != nil {
		t.Fatal(err)
	}
	spec := map[string]any{}
	if err := kinds[0].CheckSpec(spec, fieldsNow); err != nil {
		t.Fatal(err)
	}
	if spec["size"] != 3.0 || spec["ratio"] != 0.5 || len(spec["tags"].([]any)) != 2 || spec["meta"].(map[string]any)["a"] != 1.0 {
		t.Errorf("defaults = %#v, want JSON-shaped values", spec)
	}
}

// TestDefaulted: the paths a create's check filled in, top level and in list items and
// objects, and the spec without them is the spec as written.
func TestDefaulted(t *testing.T) {
	k := &Kind{Name: "gizmo", Fields: []Field{
		{Name: "size", Type: TypeInteger, Default: 1},
		{Name: "heated", Type: TypeBool, Default: false},
		{Name: "label", Type: TypeString},
		{Name: "parts", Type: TypeList, Items: &Field{Type: TypeObject, Fields: []Field{
			{Name: "name", Type: TypeString, Required: true},
			{Name: "count", Type: TypeInteger, Default: 1},
		}}},
		{Name: "settings", Type: TypeObject, Fields: []Field{{Name: "mode", Type: TypeString, Default: "auto"}}},
	}}
	tests := []struct {
		name    string
		written map[string]any
		want    []string
	}{
		{"nothing written", map[string]any{}, []string{"heated", "size"}},
		{"a default written out", map[string]any{"heated": false, "size": nil}, []string{"size"}},
		{"items", map[string]any{"heated": true, "size": 2.0, "parts": []any{
			map[string]any{"name": "a"}, map[string]any{"name": "b", "count": 1.0}}},
			[]string{"parts[0].count"}},
		{"object", map[string]any{"heated": true, "size": 2.0, "settings": map[string]any{}}, []string{"settings.mode"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := make(map[string]any, len(tt.written))
			for key, v := range tt.written {
				spec[key] = v
			}
			if err := k.CheckSpec(spec, time.Now()); err != nil {
				t.Fatal(err)
			}
			got := Defaulted(tt.written, spec)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Defaulted(%v, %v) = %v, want %v", tt.written, spec, got, tt.want)
			}
			back := WithoutPaths(spec, got)
			want := map[string]any{}
			for key, v := range tt.written {
				if v != nil {
					want[key] = v
				}
			}
			if !reflect.DeepEqual(normaliseYAML(back), normaliseYAML(want)) {
				t.Errorf("WithoutPaths(%v, %v) = %v, want %v", spec, got, back, want)
			}
		})
	}
}
