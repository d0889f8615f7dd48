package e2e

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/yagent/yagent/internal/testbuild"
)

// TestProtocolV1_PluginLoadsAndRuns: a plugin built against the frozen sdk
// of the previous plugin protocol is listed by the real host as speaking
// it, and once pinned its tool runs through yagent serve, its question
// reaching the host (no client to ask: unanswered) and its progress too.
func TestProtocolV1_PluginLoadsAndRuns(t *testing.T) {
	dir := filepath.Join(binDir, "protocol-v1")
	if err := testbuild.BuildModule(testbuild.ProtocolV1Dir, filepath.Join(dir, "yagent-plugin-oldproto")); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	e.dirs = append(e.dirs, dir)
	out, err := e.cli("plugins", "list", "-o", "json")
	if err != nil {
		t.Fatalf("plugins list: %v\n%s", err, out)
	}
	type plugin struct {
		Name     string `json:"name"`
		Protocol int    `json:"protocol"`
		Tools    int    `json:"tools"`
		Refused  string `json:"refused"`
	}
	var list []plugin
	// The list follows the warnings on stderr (browser, say, missing here).
	if err := json.Unmarshal([]byte(out[max(strings.Index(out, "[\n"), 0):]), &list); err != nil {
		t.Fatalf("plugins list -o json: %v\n%s", err, out)
	}
	i := slices.IndexFunc(list, func(p plugin) bool { return p.Name == "oldproto" })
	if i < 0 || list[i].Protocol != 1 || list[i].Tools != 1 || list[i].Refused != "" {
		t.Fatalf("plugins list: %+v, want oldproto of protocol 1 with one tool", list)
	}
	if j := slices.IndexFunc(list, func(p plugin) bool { return p.Name == "fs" }); j < 0 || list[j].Protocol != 2 {
		t.Errorf("plugins list: %+v, want fs of protocol 2", list)
	}
	if out, err := e.cli("plugins", "pin", "oldproto"); err != nil {
		t.Fatalf("pin oldproto: %v\n%s", err, out)
	}
	c := e.serve(nil)
	r := c.call(t, "old_echo", map[string]any{"text": "from the last version"})
	if got, want := text(r), "echo: from the last version; approval: unanswered; network: "; r.IsError || !strings.HasPrefix(got, want) {
		t.Fatalf("old_echo: isError=%v %q, want %q\nstderr:\n%s", r.IsError, got, want, c.stderr.String())
	}
	r = c.call(t, "old_echo", map[string]any{"text": ""})
	if !r.IsError || code(r) != "invalid_input" {
		t.Errorf("old_echo with no text: isError=%v code=%q %q, want invalid_input", r.IsError, code(r), text(r))
	}
}
