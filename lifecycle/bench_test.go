package lifecycle

import "testing"

// The provider plans with Route and the simulator checks every request with Check: both are
// on hot paths. Parse runs once per start.

func BenchmarkRoute(b *testing.B) {
	k, err := Builtin().Kind("machine")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.Route("DELETED", "", "PAUSED", false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheck(b *testing.B) {
	k, err := Builtin().Kind("machine")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.Check("RUNNING", "stop", false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBuiltin(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := loadBuiltin(); err != nil {
			b.Fatal(err)
		}
	}
}
