package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/yagent/yagent/host/telemetry"
)

// TestOpenTelemetry: without an OTEL_* exporter variable Open installs no
// observer (no spans, no propagation); with one it installs the telemetry.
func TestOpenTelemetry(t *testing.T) {
	for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"} {
		t.Setenv(k, "")
	}
	root := t.TempDir()
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	for _, d := range []string{ws, home, filepath.Join(root, "plugins")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opts := Options{Workspace: ws, Home: home, PluginDirs: []string{filepath.Join(root, "plugins")},
		CacheDir: filepath.Join(root, "cache"), LockFile: filepath.Join(root, "plugins.lock")}
	// installed is the telemetry among the observers the surface is given
	// (the audit trail is there too), nil when there is none.
	installed := func() *telemetry.Telemetry {
		t.Helper()
		a, err := Open(t.Context(), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close(t.Context())
		for _, o := range a.observers {
			if tel, ok := o.(*telemetry.Telemetry); ok {
				return tel
			}
		}
		return nil
	}
	if tel := installed(); tel != nil {
		t.Error("telemetry not configured, yet its observer is installed")
	}
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
	if installed() == nil {
		t.Error("OTEL_TRACES_EXPORTER=otlp: no telemetry observer installed")
	}
}
