package provider

import (
	"slices"
	"testing"
)

func TestUnreadLogLevels(t *testing.T) {
	const cookie = "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2"
	tests := []struct {
		name string
		give map[string]string
		want []string
	}{
		{"outside terraform", map[string]string{}, nil},
		{"outside terraform with TF_LOG", map[string]string{"TF_LOG": "TRACE"}, nil},
		{"terraform logging off", map[string]string{pluginCookieEnv: cookie}, sdkLogLevelEnvs},
		{"TF_LOG set", map[string]string{pluginCookieEnv: cookie, "TF_LOG": "DEBUG"}, nil},
		{"TF_LOG_PROVIDER set", map[string]string{pluginCookieEnv: cookie, "TF_LOG_PROVIDER": "INFO"}, nil},
		{"empty TF_LOG is unset", map[string]string{pluginCookieEnv: cookie, "TF_LOG": ""}, sdkLogLevelEnvs},
		{
			"levels the user set stay",
			map[string]string{pluginCookieEnv: cookie, "TF_LOG_SDK_PROTO": "DEBUG", providerLoggerEnv: "TRACE"},
			[]string{"TF_LOG_SDK", "TF_LOG_SDK_FRAMEWORK"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lookup := func(name string) (string, bool) { v, ok := tt.give[name]; return v, ok }
			if got := unreadLogLevels(lookup); !slices.Equal(got, tt.want) {
				t.Errorf("unreadLogLevels(%v) = %v, want %v", tt.give, got, tt.want)
			}
		})
	}
}
