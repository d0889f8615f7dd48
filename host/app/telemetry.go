package app

import (
	"context"
	"fmt"
	"os"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/host/telemetry"
)

// openTelemetry returns the telemetry observer when the OTEL_* variables
// configure an exporter, and nil (nothing installed, nothing propagated)
// when they do not. On, it also turns the plugins' side on and has the
// plugin manager flush the exporters as it closes.
func (a *App) openTelemetry(ctx context.Context) adapter.Observer {
	if !telemetry.Enabled(os.Getenv) {
		return nil
	}
	t, err := telemetry.FromEnv(ctx)
	if err != nil {
		a.Warnings = append(a.Warnings, fmt.Sprintf("telemetry is off: %v", err))
		return nil
	}
	a.Plugins.SetTelemetry(t)
	return t
}
