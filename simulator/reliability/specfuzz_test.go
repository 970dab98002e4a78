package reliability

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/simtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// TestSpecFuzz sends creates whose specs are kinds' samples bent in the ways that slipped
// through before (nulls for required fields and list items, nulls inside items, items sharing
// a name, names at the bound, counts changed), and checks every object an accepted request
// made, children included, with a validator of its own (not the simulator's): required fields
// set and not null at every depth, no null list item, names within the bound, children
// unique by name. A violation is an accepted-but-invalid object; lost counts invalid children.
func TestSpecFuzz(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	sim := simtest.Start(t, simtest.WithClock(engine.NewManualClock(now)), simtest.WithoutWorker(), simtest.WithTimeScale(1),
		simtest.WithEngineOptions(func(o *engine.Options) { o.CheckInvariants = true }))
	reg := sim.Engine.Registry()
	colls := []string{"leases", "mcis", "clusters", "accounts", "cloudlets"}
	rng := rand.New(rand.NewPCG(32, 1))
	n := scale(400, 4000)
	var tried, accepted, invalid, invalidKids, fivexx int
	for i := range n {
		coll := colls[rng.IntN(len(colls))]
		k, _ := reg.ByCollection(coll)
		spec := bend(rng, k, k.SampleSpec(now))
		name := fmt.Sprint("f", i)
		if rng.IntN(8) == 0 {
			name = strings.Repeat("n", engine.MaxNameBytes-rng.IntN(4))
		}
		st, body, err := call(http.MethodPost, sim.URL+"/v1/"+coll, client.CreateRequest{Name: name, Spec: spec})
		tried++
		if err != nil || st >= 500 {
			fivexx++
			continue
		}
		if st != http.StatusAccepted && st != http.StatusCreated {
			continue
		}
		accepted++
		var o client.Object
		_ = json.Unmarshal(body, &o)
		if p := validObject(reg, o.Kind, o.Name, o.Spec); p != "" {
			invalid++
			t.Errorf("accepted but invalid: %s %s: %s (spec %v)", o.Kind, o.ID, p, spec)
		}
		kids, err := sim.Store.List(t.Context(), "", store.Filter{ParentID: o.ID})
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, kid := range kids {
			p := validObject(reg, kid.Kind, kid.Name, kid.Spec)
			if p == "" && names[kid.Kind+"/"+kid.Name] {
				p = "two children named " + kid.Name
			}
			names[kid.Kind+"/"+kid.Name] = true
			if p != "" {
				invalidKids++
				t.Errorf("invalid child of %s %s: %s %s: %s", o.Kind, o.ID, kid.Kind, kid.ID, p)
			}
		}
	}
	if v := sim.Engine.Violations(); len(v) > 0 {
		t.Errorf("invariant violations: %v", v)
	}
	checkRow(t, row{name: "spec fuzz", tried: tried, lost: invalidKids, violations: invalid, fivexx: fivexx,
		note: fmt.Sprintf("%d accepted; accepted-but-invalid objects %d / invalid children %d", accepted, invalid, invalidKids)})
}

// bend changes a valid sample spec in one of the ways that slipped through before.
func bend(rng *rand.Rand, k *lifecycle.Kind, spec map[string]any) map[string]any {
	if len(k.Fields) == 0 || rng.IntN(5) == 0 {
		return spec
	}
	f := k.Fields[rng.IntN(len(k.Fields))]
	switch rng.IntN(6) {
	case 0:
		spec[f.Name] = nil
	case 1: // a null item
		if items, ok := spec[f.Name].([]any); ok {
			spec[f.Name] = append(items, nil)
		}
	case 2: // a null inside an item
		if items, ok := spec[f.Name].([]any); ok && len(items) > 0 && f.Items != nil && len(f.Items.Fields) > 0 {
			if m, ok := items[0].(map[string]any); ok {
				m[f.Items.Fields[rng.IntN(len(f.Items.Fields))].Name] = nil
			}
		}
	case 3: // an item twice (the same name)
		if items, ok := spec[f.Name].([]any); ok && len(items) > 0 {
			spec[f.Name] = append(items, items[0])
		}
	case 4: // a long item name
		if items, ok := spec[f.Name].([]any); ok && len(items) > 0 {
			if m, ok := items[0].(map[string]any); ok {
				if _, named := m["name"]; named {
					m["name"] = strings.Repeat("g", 64)
				}
			}
		}
	default: // counts up
		if items, ok := spec[f.Name].([]any); ok && len(items) > 0 {
			if m, ok := items[0].(map[string]any); ok {
				if _, counted := m["count"]; counted {
					m["count"] = 1 + rng.IntN(5)
				}
			}
		}
	}
	return spec
}

// validObject is the fuzz's own validator: what must hold of every stored object.
func validObject(reg *lifecycle.Registry, kind, name string, spec map[string]any) string {
	if len(name) > engine.MaxNameBytes {
		return fmt.Sprintf("name is %d bytes", len(name))
	}
	k, err := reg.Kind(kind)
	if err != nil {
		return "unknown kind"
	}
	return validFields("spec", k.Fields, spec)
}

func validFields(path string, fields []lifecycle.Field, m map[string]any) string {
	for _, f := range fields {
		v, ok := m[f.Name]
		if f.Required && (!ok || v == nil) {
			return path + "." + f.Name + " is required but missing or null"
		}
		if items, ok := v.([]any); ok {
			for i, it := range items {
				if it == nil {
					return fmt.Sprintf("%s.%s[%d] is null", path, f.Name, i)
				}
				if sub, ok := it.(map[string]any); ok && f.Items != nil {
					if p := validFields(fmt.Sprintf("%s.%s[%d]", path, f.Name, i), f.Items.Fields, sub); p != "" {
						return p
					}
				}
			}
		}
		if sub, ok := v.(map[string]any); ok && len(f.Fields) > 0 {
			if p := validFields(path+"."+f.Name, f.Fields, sub); p != "" {
				return p
			}
		}
	}
	return ""
}
