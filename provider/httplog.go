package provider

import (
	"context"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// httpSubsystem names the provider's HTTP log lines. TF_LOG=DEBUG shows every request and
// retry; TF_LOG_PROVIDER_LIFECYCLE_HTTP sets their level apart from the provider's other lines
// (Terraform keeps a provider's lines only when TF_LOG or TF_LOG_PROVIDER is set).
const httpSubsystem = "http"

var _ retryablehttp.LeveledLogger = httpLogger{}

// httpLogger sends go-retryablehttp's logs (each request, each retry and why) to tflog. The
// logger interface carries no context, so it keeps the provider's root one from Configure:
// lines land in Terraform's log with the provider's name, whatever the request.
type httpLogger struct {
	ctx context.Context //nolint:containedctx // retryablehttp.LeveledLogger has no context parameter
}

func newHTTPLogger(ctx context.Context) httpLogger {
	return httpLogger{ctx: tflog.NewSubsystem(ctx, httpSubsystem, tflog.WithLevelFromEnv(providerLoggerEnv, httpSubsystem))}
}

func (l httpLogger) Error(msg string, kv ...any) {
	tflog.SubsystemError(l.ctx, httpSubsystem, msg, fields(kv))
}

func (l httpLogger) Info(msg string, kv ...any) {
	tflog.SubsystemInfo(l.ctx, httpSubsystem, msg, fields(kv))
}

func (l httpLogger) Debug(msg string, kv ...any) {
	tflog.SubsystemDebug(l.ctx, httpSubsystem, msg, fields(kv))
}

func (l httpLogger) Warn(msg string, kv ...any) {
	tflog.SubsystemWarn(l.ctx, httpSubsystem, msg, fields(kv))
}

// fields turns retryablehttp's alternating keys and values into tflog fields.
func fields(kv []any) map[string]any {
	out := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		key, ok := kv[i].(string)
		if !ok {
			continue
		}
		out[key] = kv[i+1]
	}
	return out
}
