package tools

import (
	"os"
	"testing"

	"github.com/yagent/yagent/plugins/search/internal/nav"
)

// TestMain lets the test binary serve as the Go loader, as the plugin's
// binary does: find_references under a sandbox starts os.Executable().
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == nav.LoaderArg {
		os.Exit(nav.ServeLoader(os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
