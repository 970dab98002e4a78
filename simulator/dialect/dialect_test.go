package dialect_test

import (
	"regexp"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
)

// uuidV8 is an RFC 9562 version 8 UUID in lower case.
var uuidV8 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestUUIDRoundTrip(t *testing.T) {
	tests := []struct{ kind, id string }{
		{"lease", "lease-0000000000000000"},
		{"lease", "lease-ffffffffffffffff"},
		{"lease", "lease-19a6a2b3c4d5e6f7"},
		{"event", "event-0123456789abcdef"},
		{"my-lease", "my-lease-8000000000000001"},
	}
	for _, tt := range tests {
		u, ok := dialect.UUID(tt.id)
		if !ok || !uuidV8.MatchString(u) || !dialect.IsUUID(u) {
			t.Fatalf("UUID(%q) = %q, %v, want a version 8 UUID", tt.id, u, ok)
		}
		if got, ok := dialect.IDOf(tt.kind, u); !ok || got != tt.id {
			t.Errorf("IDOf(%q, UUID(%q)) = %q, %v, want the ID back", tt.kind, tt.id, got, ok)
		}
	}
}

func TestUUIDRefusals(t *testing.T) {
	lease, _ := dialect.UUID("lease-19a6a2b3c4d5e6f7")
	event, _ := dialect.UUID("event-19a6a2b3c4d5e6f7")
	if lease == event {
		t.Fatalf("a lease and an event with one number have one UUID %s", lease)
	}
	tests := []struct{ name, kind, give string }{
		{"another kind's", "lease", event},
		{"random v4", "lease", "0b7f8e6e-3b7a-4c1e-9d2f-6c1f2e3d4a5b"},
		{"not hex", "lease", "zzzzzzzz-zzzz-8zzz-8zzz-zzzzzzzzzzzz"},
		{"short", "lease", lease[:35]},
		{"a name", "lease", "my-lease"},
		{"no dashes", "lease", lease[:8] + "x" + lease[9:]},
	}
	for _, tt := range tests {
		if id, ok := dialect.IDOf(tt.kind, tt.give); ok {
			t.Errorf("%s: IDOf(%q, %q) = %q, want no ID", tt.name, tt.kind, tt.give, id)
		}
	}
	for _, id := range []string{"lease", "lease-123", "lease-19A6A2B3C4D5E6F7", "-19a6a2b3c4d5e6f7", "lease-19a6a2b3c4d5e6fg"} {
		if u, ok := dialect.UUID(id); ok {
			t.Errorf("UUID(%q) = %q, want none (not an engine ID)", id, u)
		}
	}
}

// The UUIDs sort as the IDs do (the engine's IDs grow with time), so a list in ID order is in
// UUID order too.
func TestUUIDOrder(t *testing.T) {
	a, _ := dialect.UUID("lease-19a6a2b3c4d5e6f7")
	b, _ := dialect.UUID("lease-19a6a2b3c4d5e6f8")
	c, _ := dialect.UUID("lease-19a6a2b3c4d5e700")
	if !(a < b && b < c) {
		t.Errorf("UUIDs %s, %s, %s are not in their IDs' order", a, b, c)
	}
}
