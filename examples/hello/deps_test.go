package main

import (
	"os/exec"
	"strings"
	"testing"
)

// hostOnly are what a plugin's build must not pull in by importing the sdk
// and sdk/plugintest: the host process (anything under host/), its front
// ends, its profile loader and the libraries they bring.
var hostOnly = []string{
	"github.com/chromedp/",
	"github.com/spf13/cobra",
	"github.com/knadh/koanf",
	"github.com/modelcontextprotocol/",
	"github.com/yagent/yagent/host/",
	"github.com/yagent/yagent/cmd/",
	"github.com/yagent/yagent/plugins/",
	"github.com/yagent/yagent/profiles",
}

// The example plugin and its tests build with the sdk alone, as a team's
// plugin would: go list -deps -test names none of the host's dependencies.
func TestHello_BuildsWithoutTheHost(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-test", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps -test: %v", err)
	}
	var bad []string
	for _, pkg := range strings.Fields(string(out)) {
		for _, p := range hostOnly {
			if strings.HasPrefix(pkg, p) {
				bad = append(bad, pkg)
			}
		}
	}
	if len(bad) > 0 {
		t.Fatalf("examples/hello depends on what only the host needs:\n%s\nkeep sdk and sdk/plugintest free of them (docs/ARCHITECTURE.md#layers)", strings.Join(bad, "\n"))
	}
	if !strings.Contains(string(out), "github.com/yagent/yagent/call/guard\n") {
		t.Fatalf("go list names no call/guard: does the test still see sdk/plugintest? got:\n%s", out)
	}
}
