package dialect_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

func TestBodyDecode(t *testing.T) {
	empty := &dialect.Error{Status: http.StatusBadRequest, Message: "send a body"}
	named := dialect.Body{Limit: 16, TooLarge: "TOO_LARGE", Malformed: "MALFORMED"}
	tests := []struct {
		name string
		body dialect.Body
		give string
		want error // nil, or the *dialect.Error wanted
	}{
		{"json", named, `{"a":"b","x":1}`, nil},
		{"empty allowed", named, ``, nil},
		{"empty refused", dialect.Body{Limit: 16, Empty: empty}, ``, empty},
		{"over the limit", named, `{"a":"` + strings.Repeat("b", 32) + `"}`,
			&dialect.Error{Status: 413, Name: "TOO_LARGE", Message: "the request body is over the limit of 16 bytes"}},
		{"not json", named, `{a`,
			&dialect.Error{Status: 400, Name: "MALFORMED", Message: "invalid JSON body: invalid character 'a' looking for beginning of object key string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v struct{ A string }
			err := tt.body.Decode(httptest.NewRecorder(), httptest.NewRequest("POST", "/", strings.NewReader(tt.give)), &v)
			var got *dialect.Error
			switch {
			case tt.want == nil && err != nil:
				t.Errorf("Decode(%q) = %v, want nil", tt.give, err)
			case tt.want != nil && (!errors.As(err, &got) || *got != *tt.want.(*dialect.Error)):
				t.Errorf("Decode(%q) = %#v, want %#v", tt.give, err, tt.want)
			case tt.want == nil && tt.give != "" && v.A != "b":
				t.Errorf("Decode(%q) read %+v", tt.give, v)
			}
		})
	}
}

func TestInjectedError(t *testing.T) {
	tests := []struct {
		give wire.FaultRule
		want wire.Error
	}{
		{wire.FaultRule{ID: "f1", HTTPStatus: 503, Code: "unavailable"}, wire.Error{Status: 503, Code: wire.CodeUnavailable, Message: "injected HTTP error (fault f1)"}},
		{wire.FaultRule{ID: "f2", HTTPStatus: 429, Code: "rate_limited", Message: "slow down"}, wire.Error{Status: 429, Code: wire.CodeRateLimited, Message: "slow down"}},
	}
	for _, tt := range tests {
		var got *wire.Error
		if err := dialect.InjectedError(&tt.give); !errors.As(err, &got) || got.Status != tt.want.Status || got.Code != tt.want.Code || got.Message != tt.want.Message {
			t.Errorf("InjectedError(%+v) = %v, want %+v", tt.give, err, tt.want)
		}
	}
}

func TestTenant(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	if got := dialect.Tenant(r); got != "" {
		t.Errorf("Tenant(no tenant) = %q, want empty", got)
	}
	if got := dialect.Tenant(dialect.WithTenant(r, "acme")); got != "acme" {
		t.Errorf("Tenant(WithTenant(acme)) = %q, want acme", got)
	}
}
