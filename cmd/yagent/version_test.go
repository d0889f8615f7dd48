package main

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/yagent/yagent/sdk"
)

// TestVersion: `yagent version` and `yagent --version` print the same
// lines: the version, the commit (or why none is known), the Go that built
// it and the plugin protocols the host speaks.
func TestVersion(t *testing.T) {
	t.Parallel()
	out := func(args ...string) string {
		t.Helper()
		var o, e bytes.Buffer
		if err := run(context.Background(), args, strings.NewReader(""), &o, &e); err != nil {
			t.Fatalf("yagent %v: %v\n%s", args, err, e.String())
		}
		return o.String()
	}
	got := out("version")
	for _, want := range []string{"yagent ", "\ncommit: ", fmt.Sprintf("\ngo: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH), fmt.Sprintf("\nplugin protocols: %d, and %d for plugins built before it\n", sdk.ProtocolVersion, sdk.ProtocolVersion-1)} {
		if !strings.Contains(got, want) {
			t.Errorf("yagent version:\n%s\nlacks %q", got, want)
		}
	}
	if flag := out("--version"); flag != got {
		t.Errorf("yagent --version:\n%s\nwant the same as yagent version:\n%s", flag, got)
	}
}
