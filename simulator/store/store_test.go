package store

import (
	"errors"
	"io/fs"
	"testing"
)

// Unavailable marks an error as an outage without changing its text or hiding its cause;
// nil stays nil, and marking twice is marking once.
func TestUnavailable(t *testing.T) {
	cause := fs.ErrPermission
	tests := []struct {
		name string
		give error
		want bool
	}{
		{"nil", nil, false},
		{"cause", cause, true},
		{"marked", Unavailable(cause), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Unavailable(tt.give)
			if tt.give == nil {
				if got != nil {
					t.Fatalf("Unavailable(nil) = %v, want nil", got)
				}
				return
			}
			if !errors.Is(got, ErrUnavailable) || !errors.Is(got, cause) || got.Error() != cause.Error() {
				t.Errorf("Unavailable(%v) = %q; want ErrUnavailable and the cause, with the cause's text", tt.give, got)
			}
		})
	}
	if errors.Is(cause, ErrUnavailable) {
		t.Error("an unmarked error is ErrUnavailable")
	}
}
