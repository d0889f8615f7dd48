package pluginmgr

import (
	"context"
	"sync/atomic"
)

// Telemetry is what the manager reports to the host's telemetry: plugin
// restarts and crashes, and its Shutdown when the manager closes (after
// the plugins' last spans are in).
type Telemetry interface {
	PluginRestarted(plugin string)
	PluginCrashed(plugin string)
	Shutdown(ctx context.Context) error
}

type telemetryBox struct{ t Telemetry }

// SetTelemetry turns telemetry on: plugins launched from now on get
// sdk.TelemetryEnv and hand back the spans of the calls the host traces,
// and restarts and crashes are reported to t. Call it before Load, so the
// plugins Load starts are traced too.
func (m *Manager) SetTelemetry(t Telemetry) {
	m.telemetry.Store(&telemetryBox{t})
}

func (m *Manager) tel() Telemetry {
	if b := m.telemetry.Load(); b != nil {
		return b.t
	}
	return nil
}

// telemetryPtr is the manager's telemetry, nil when off.
type telemetryPtr = atomic.Pointer[telemetryBox]
