package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpen_LogFormat: Options.LogFormat shapes the host's own slog lines
// (text by default, JSON on request); another format is refused, saying
// which there are.
func TestOpen_LogFormat(t *testing.T) {
	t.Parallel()
	open := func(t *testing.T, format string, log *bytes.Buffer) (*App, error) {
		root := t.TempDir()
		ws := filepath.Join(root, "ws")
		if err := os.MkdirAll(ws, 0o755); err != nil {
			t.Fatal(err)
		}
		return Open(t.Context(), Options{Workspace: ws, Home: filepath.Join(root, "home"), PluginDirs: []string{root},
			CacheDir: filepath.Join(root, "cache"), LockFile: filepath.Join(root, "plugins.lock"),
			Log: log, LogLevel: "info", LogFormat: format})
	}
	t.Run("text", func(t *testing.T) {
		t.Parallel()
		var buf bytes.Buffer
		a, err := open(t, "", &buf)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close(t.Context())
		a.Logger().Debug("hidden")
		a.Logger().WithGroup("g").Info("hello", "k", 1)
		if got := buf.String(); !strings.HasSuffix(got, " [INFO]  yagent: hello: g.k=1\n") || strings.Contains(got, "hidden") {
			t.Errorf("text log: got %q, want one hclog line ending in [INFO]  yagent: hello: g.k=1", got)
		}
	})
	t.Run("json", func(t *testing.T) {
		t.Parallel()
		var buf bytes.Buffer
		a, err := open(t, "json", &buf)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close(t.Context())
		a.Logger().Warn("hello", "k", 1)
		var rec map[string]any
		if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
			t.Fatalf("json log: %v: %q", err, buf.String())
		}
		if rec["@level"] != "warn" || rec["@module"] != "yagent" || rec["@message"] != "hello" || rec["k"] != 1.0 {
			t.Errorf("json log: got %v", rec)
		}
	})
	t.Run("xml", func(t *testing.T) {
		t.Parallel()
		_, err := open(t, "xml", &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), `log format "xml": give text or json`) {
			t.Errorf("LogFormat xml: got %v, want it refused naming text and json", err)
		}
	})
}
