package hostile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCallChannel_NoCommandReachesIt: calls between the host and a plugin
// travel on a socket pair the plugin inherits (remote.CallChannel in internal/remote), with no
// name in the file system to connect to. A command the shell plugin runs
// holds no end of it and no variable naming it, and cannot take one from
// the plugin or the host with pidfd_getfd: the sandbox's Landlock domain
// stops it from reaching into processes outside it.
func TestCallChannel_NoCommandReachesIt(t *testing.T) {
	t.Parallel()
	sbNeed(t, "python3")
	script, err := os.ReadFile(filepath.Join("testdata", "steal_channel.py"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	sbWriteFiles(t, e, "cc", map[string]string{"steal.py": string(script)})
	c := e.serve("-y")
	r := sbRun(t, c, "cd cc && python3 steal.py", 0)
	var got struct {
		Own       []string          `json:"own"`
		Env       string            `json:"env"`
		Ancestors []string          `json:"ancestors"`
		Stolen    []string          `json:"stolen"`
		Refused   map[string]string `json:"refused"`
	}
	out := r.Text
	if i := strings.Index(out, "{"); i >= 0 {
		out = out[i:]
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &got); err != nil {
		t.Fatalf("the script's report: %v\n%s", err, sbText(r))
	}
	if len(got.Own) > 0 || got.Env != "unset" {
		t.Errorf("the command inherited a socket (fds %v) or the variable naming the plugin's end (%q)", got.Own, got.Env)
	}
	if len(got.Stolen) > 0 {
		t.Errorf("the command took sockets from its ancestors: %v", got.Stolen)
	}
	// The attack reached the plugin: it is not passing for want of trying.
	if !slices.ContainsFunc(got.Ancestors, func(a string) bool { return strings.HasPrefix(a, "yagent-plugin") }) || len(got.Refused) == 0 {
		t.Errorf("the script never tried the shell plugin: ancestors %v, refused %v", got.Ancestors, got.Refused)
	}
}
