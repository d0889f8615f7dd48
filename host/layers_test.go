package host_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLayers holds the lines of the import graph that the layer table
// (docs/ARCHITECTURE.md#layers) promises and a plugin author relies on:
// each package's dependencies, tests' excluded, hold none of the forbidden
// prefixes.
func TestLayers(t *testing.T) {
	t.Parallel()
	const mod = "github.com/yagent/yagent/"
	for _, c := range []struct {
		pkg, why  string
		forbidden []string
	}{
		{mod + "call/...", "what judges and runs a call is shared with the plugin test harness",
			[]string{mod + "host/", mod + "plugins/", mod + "cmd/"}},
		{mod + "sdk/plugintest", "a plugin author's tests run the host's pipeline and guard without the host process",
			[]string{mod + "host/", mod + "plugins/", mod + "cmd/"}},
		{mod + "policy", "policy decides for every side and imports none of them",
			[]string{mod + "host/", mod + "plugins/", mod + "call/", mod + "sdk"}},
		{mod + "plugins/...", "a plugin is built with the sdk alone",
			[]string{mod + "host/", mod + "call/", mod + "cmd/", mod + "internal/remote"}},
		{mod + "cmd/yagent-plugin-...", "a first-party plugin's main package is built with the sdk and its family alone",
			[]string{mod + "host/", mod + "call/", mod + "internal/remote"}},
		{mod + "sdk", "the sdk is the plugin's side of the wire; the host's half lives in internal/remote",
			[]string{mod + "internal/remote", mod + "host/", mod + "call/", mod + "plugins/", mod + "cmd/"}},
		{mod + "internal/wire", "what both ends of the wire share imports neither end",
			[]string{mod + "internal/remote", mod + "host/", mod + "call/", mod + "plugins/", mod + "cmd/", mod + "policy"}},
		{mod + "internal/remote", "the host's half of the wire is shared with the plugin test harness",
			[]string{mod + "host/", mod + "call/", mod + "plugins/", mod + "cmd/"}},
	} {
		out, err := exec.Command("go", "list", "-deps", c.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", c.pkg, err)
		}
		pkgs := strings.Fields(string(out))
		if len(pkgs) < 2 {
			t.Fatalf("go list -deps %s listed %d packages: is the path right?", c.pkg, len(pkgs))
		}
		for _, p := range pkgs {
			for _, f := range c.forbidden {
				if strings.HasPrefix(p, f) || p == strings.TrimSuffix(f, "/") {
					t.Errorf("%s depends on %s: %s", c.pkg, p, c.why)
				}
			}
		}
	}
}
