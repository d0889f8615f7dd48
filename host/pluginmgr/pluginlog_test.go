package pluginmgr

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// TestPluginLogger: go-plugin's lines about plugin fs and the lines it
// re-emits from the plugin's stderr are named yagent.fs (a sub-logger's
// suffix kept), without the plugin's own @module and timestamp.
func TestPluginLogger(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	parent := hclog.New(&hclog.LoggerOptions{Name: "yagent", Output: &buf, Level: hclog.Trace, JSONFormat: true})
	l := newPluginLogger(parent, "fs", "yagent-plugin-fs")
	l.Debug("starting plugin")
	stderr := l.Named("yagent-plugin-fs") // as go-plugin's logStderr names it
	stderr.Warn("from the plugin", "@module", "fs", "k", 1, "timestamp", "2026-12-01T23:00:00.000Z")
	stderr.Info("from a sub-logger", "@module", "fs.browser")
	stderr.Log(hclog.Error, "odd args", "k")
	l.Named("stdio").Debug("stdio")

	want := []struct{ module, msg string }{
		{"yagent.fs", "starting plugin"},
		{"yagent.fs", "from the plugin"},
		{"yagent.fs.browser", "from a sub-logger"},
		{"yagent.fs", "odd args"},
		{"yagent.fs.stdio", "stdio"},
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, line := range lines {
		var got map[string]any
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, line)
		}
		if got["@module"] != want[i].module || got["@message"] != want[i].msg {
			t.Errorf("line %d: @module %v @message %v, want %s %q", i, got["@module"], got["@message"], want[i].module, want[i].msg)
		}
		if _, ok := got["timestamp"]; ok {
			t.Errorf("line %d keeps the plugin's timestamp: %s", i, line)
		}
	}
	if !strings.Contains(lines[1], `"k":1`) {
		t.Errorf("the plugin's own fields are lost: %s", lines[1])
	}
}
