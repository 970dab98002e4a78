package provider

import (
	"os"
	"sync"
)

// Environment variables that decide what Terraform and the plugin SDK log.
const (
	// pluginCookieEnv is set by Terraform in the environment of the providers it starts
	// (go-plugin's handshake): a provider run by hand for debugging (-debug) or served
	// in-process by a test has none.
	pluginCookieEnv = "TF_PLUGIN_MAGIC_COOKIE"
	// providerLoggerEnv sets this provider's own log level (tflog), as terraform-plugin-go
	// names it from the provider's address.
	providerLoggerEnv = "TF_LOG_PROVIDER_LIFECYCLE"
)

// sdkLogLevelEnvs set the log levels of the plugin SDK's loggers and of this provider's.
var sdkLogLevelEnvs = []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", providerLoggerEnv}

var quietOnce sync.Once

// quietUnreadLogs turns off the logs of the SDK and of the provider when Terraform started the
// provider and throws their logs away (see unreadLogLevels).
func quietUnreadLogs() {
	quietOnce.Do(func() {
		for _, name := range unreadLogLevels(os.LookupEnv) {
			_ = os.Setenv(name, "OFF")
		}
	})
}

// unreadLogLevels lists the log level variables to set to OFF, given the environment.
//
// Terraform keeps a provider's log lines only when TF_LOG or TF_LOG_PROVIDER is set;
// otherwise it reads each JSON line the provider writes to stderr and drops it. The SDK logs
// at TRACE unless told otherwise, several lines per request, so a large apply spends about a
// third of the provider's CPU time, and more of Terraform's, on lines nobody reads. So when
// Terraform started the provider and neither is set, the levels not set already are turned
// off. With TF_LOG set, or outside Terraform (a test, -debug), nothing changes.
func unreadLogLevels(lookup func(string) (string, bool)) []string {
	set := func(name string) bool { v, ok := lookup(name); return ok && v != "" }
	if !set(pluginCookieEnv) || set("TF_LOG") || set("TF_LOG_PROVIDER") {
		return nil
	}
	var out []string
	for _, name := range sdkLogLevelEnvs {
		if _, ok := lookup(name); !ok {
			out = append(out, name)
		}
	}
	return out
}
