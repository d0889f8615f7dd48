package main

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
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

// TestVersionOf: the commit comes from the build info's VCS settings where
// go stamped them, else from what -ldflags set (scripts/dist.sh), else it
// is unknown; the version from -ldflags, else the module's.
func TestVersionOf(t *testing.T) {
	t.Parallel()
	stamped := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "aaaa"}, {Key: "vcs.modified", Value: "false"},
	}}
	plain := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}
	for _, c := range []struct {
		name, v, commit string
		modified        bool
		bi              *debug.BuildInfo
		want            string
	}{
		{"go stamped", "dev", "", false, stamped, "yagent v1.2.3\ncommit: aaaa\n"},
		{"go's stamp wins", "v9", "bbbb", true, stamped, "yagent v9\ncommit: aaaa\n"},
		{"ldflags", "v0.1.0-dirty", "bbbb", true, plain, "yagent v0.1.0-dirty\ncommit: bbbb, with uncommitted changes\n"},
		{"ldflags, clean", "v0.1.0", "bbbb", false, nil, "yagent v0.1.0\ncommit: bbbb\n"},
		{"none", "dev", "", false, plain, "yagent (devel)\ncommit: unknown (built without version control information)\n"},
	} {
		if got := versionOf(c.v, c.commit, c.modified, c.bi); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: versionOf:\n%s\nwant it to start\n%s", c.name, got, c.want)
		}
	}
}
