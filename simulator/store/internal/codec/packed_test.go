package codec

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// A packed object decodes to what its JSON decodes to: the stores serve the same objects from
// either form.
func TestPackObject(t *testing.T) {
	at := time.Date(2026, 11, 27, 20, 44, 4, 381099851, time.UTC)
	tests := []struct {
		name string
		give store.Object
	}{
		{"at rest, empty maps", store.Object{Name: "fill-1", Spec: map[string]any{}, Defaulted: []string{}, Status: map[string]any{},
			StateSince: at, CreatedAt: at, UpdatedAt: at.Add(time.Millisecond)}},
		{"nil maps, zero times", store.Object{Name: ""}},
		{"spec, status, defaulted", store.Object{Name: "vm", Spec: map[string]any{"vcpus": 2.0, "image_id": "image-1", "tags": []any{"a"}},
			Defaulted: []string{"vcpus"}, Status: map[string]any{"ip": "10.0.0.1"}, CreatedAt: at}},
		{"an operation and a due time", store.Object{Name: "vm", Due: at.Add(2 * time.Second), Op: &store.Operation{
			ID: "op-1", Action: "start", From: "HALTED", Phase: 1, StartedAt: at, PhaseStarted: at,
			Lanes: map[string]map[string]*store.Lane{"aws": {"r1": {Running: 2, Head: "vm-3"}}}, Followers: []string{"vm-2"}}}},
		{"members, queue, cascade", store.Object{Name: "mci", Members: map[string]int{"Running": 3}, CascadeFrom: "RUNNING",
			Queue: &store.QueueEntry{By: "mci-1", Op: "op-2", Lane: []string{"aws", "r1"}, Next: "vm-9"}}},
		{"a zone offset", store.Object{Name: "z", CreatedAt: at.In(time.FixedZone("CET", 3600)), UpdatedAt: at.In(time.FixedZone("", -7*3600))}},
		{"local time", store.Object{Name: "l", CreatedAt: at.Local(), Due: store.MaxDue}},
		{"before 1970", store.Object{Name: "old", CreatedAt: time.Date(1900, 1, 1, 0, 0, 0, 5, time.UTC), UpdatedAt: at}},
		{"times before creation, far after it", store.Object{Name: "t", CreatedAt: at, StateSince: at.Add(-time.Hour), Due: store.MaxDue,
			UpdatedAt: time.Date(2400, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{"created in a zone, the rest in UTC", store.Object{Name: "t", CreatedAt: at.In(time.FixedZone("", 3600)), UpdatedAt: at}},
	}
	cols := Columns{ID: "machine-1", Tenant: "acme", Kind: "machine", ParentID: "cloudspace-1", State: "RUNNING", Version: 7}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.give
			o.ID, o.Tenant, o.Kind, o.ParentID, o.State, o.Version = cols.ID, cols.Tenant, cols.Kind, cols.ParentID, cols.State, cols.Version
			j, err := json.Marshal(&o)
			if err != nil {
				t.Fatal(err)
			}
			want, err := DecodeObject(j)
			if err != nil {
				t.Fatal(err)
			}
			p, err := PackObject(nil, &o)
			if err != nil {
				t.Fatalf("PackObject: %v", err)
			}
			got, err := UnpackObject(p, cols)
			if err != nil {
				t.Fatalf("UnpackObject: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("UnpackObject(PackObject(o)) =\n%+v\nwant (o through JSON)\n%+v", got, want)
			}
			if len(p) >= len(j) {
				t.Errorf("packed %d bytes, its JSON %d: want fewer", len(p), len(j))
			}
			if tt.name == "at rest, empty maps" && len(p) > 32 {
				t.Errorf("a cloudspace at rest packed into %d bytes, want at most 32 (a 32-byte block)", len(p))
			}
			if !IsPacked(p) || IsPacked(j) {
				t.Errorf("IsPacked(packed) = %v, IsPacked(JSON) = %v, want true, false", IsPacked(p), IsPacked(j))
			}
			spec, err := PackedSpec(p)
			if err != nil || !reflect.DeepEqual(spec, emptyAsNil(want.Spec)) {
				t.Errorf("PackedSpec = %v, %v, want %v", spec, err, want.Spec)
			}
		})
	}
}

func emptyAsNil(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	return m
}

// A damaged or cut packed object is an error, never a panic or a wrong object.
func TestUnpackObjectDamaged(t *testing.T) {
	o := store.Object{Name: "vm", Spec: map[string]any{"a": "b"}, CreatedAt: time.Unix(1, 2).UTC()}
	p, err := PackObject(nil, &o)
	if err != nil {
		t.Fatal(err)
	}
	for _, give := range [][]byte{nil, {}, {2, 0}, p[:3], p[:len(p)-1], append([]byte{packVersion, 0, 1, 'x', 9}, p[4:]...)} {
		if got, err := UnpackObject(give, Columns{ID: "x"}); err == nil {
			t.Errorf("UnpackObject(%q) = %+v, want an error", give, got)
		}
	}
}

// BenchmarkObjectForms compares an object's two forms, side by side in one run: a machine in
// a phase (spec, defaulted, status, an operation), as the PostgreSQL store writes it on every
// accepted action and landing and decodes it on every claim and read — JSON (before its
// schema version 7) against the packed form with its columns.
func BenchmarkObjectForms(b *testing.B) {
	at := time.Date(2026, 11, 27, 20, 44, 4, 381099851, time.UTC)
	o := &store.Object{ID: "machine-6888013b7e67d451", Tenant: "acme", Kind: "machine", Name: "bench-17",
		ParentID: "cloudspace-6888013b7e67d450", State: "STOPPING", Version: 12,
		Spec:      map[string]any{"image_id": "image-6888013b7e67d44f", "vcpus": 2.0, "memory": 2048.0, "disk_size": 10.0},
		Defaulted: []string{"vcpus", "memory", "disk_size"}, Status: map[string]any{},
		Op:  &store.Operation{ID: "op-6888013b7e67d4a0", Action: "stop", From: "RUNNING", StartedAt: at, PhaseStarted: at},
		Due: at.Add(2 * time.Millisecond), StateSince: at, CreatedAt: at.Add(-time.Minute), UpdatedAt: at}
	js, err := json.Marshal(o)
	if err != nil {
		b.Fatal(err)
	}
	packed, err := PackObject(nil, o)
	if err != nil {
		b.Fatal(err)
	}
	cols := ColumnsOf(o)
	b.Run("encode/json", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(o); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(js)), "bytes/object")
	})
	b.Run("encode/packed", func(b *testing.B) {
		for b.Loop() {
			if _, err := PackObject(nil, o); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(packed)), "bytes/object")
	})
	b.Run("decode/json", func(b *testing.B) {
		for b.Loop() {
			if _, err := DecodeStored(js, cols); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode/packed", func(b *testing.B) {
		for b.Loop() {
			if _, err := DecodeStored(packed, cols); err != nil {
				b.Fatal(err)
			}
		}
	})
}
