package pluginmgr

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/yagent/yagent/internal/remote"
	"github.com/yagent/yagent/internal/testbuild"
	"github.com/yagent/yagent/sdk"
)

// oldProtoDir holds yagent-plugin-oldproto, built once from the frozen
// sdk of protocol 1 (testdata/protocol-v1).
var oldProtoDir = sync.OnceValues(func() (string, error) {
	dir := filepath.Join(testPluginDir, "protocol-v1")
	return dir, testbuild.BuildModule(testbuild.ProtocolV1Dir, filepath.Join(dir, BinaryPrefix+"oldproto"))
})

// TestLaunch_ProtocolV1: a plugin built against the sdk of the previous
// protocol loads, says it speaks it, and runs a call on either path with
// both callbacks (progress and a question, which go to the host's Host
// service under version 1's name); under network proxy it is told no
// network, as the boolean it reads says.
func TestLaunch_ProtocolV1(t *testing.T) {
	t.Parallel()
	dir, err := oldProtoDir()
	if err != nil {
		t.Fatal(err)
	}
	eachPath(t, func(t *testing.T, grpc bool) {
		host := &fakeHost{}
		m := newManager(t, Options{Dirs: []string{dir}, Host: host, GRPCCalls: grpc})
		plugins, warnings, err := m.Load(context.Background())
		if err != nil || len(plugins) != 1 || plugins[0].Refused != nil {
			t.Fatalf("Load: %v, %d plugins (%v), warnings %q", err, len(plugins), plugins, warnings)
		}
		p := plugins[0]
		if p.Protocol != remote.PreviousProtocolVersion || p.Version != "1.0.0" || len(p.Specs) != 1 || p.Specs[0].Name != "old_echo" {
			t.Fatalf("Load: protocol %d, version %q, specs %v; want %d, 1.0.0, old_echo", p.Protocol, p.Version, specNames(p.Specs), remote.PreviousProtocolVersion)
		}
		var progress []string
		res, err := p.Execute(context.Background(), sdk.CallInfo{Tool: "old_echo", SessionID: "s-1", Sandbox: &sdk.Sandbox{Network: sdk.NetworkProxy}},
			[]byte(`{"text":"hi"}`), func(pr sdk.Progress) { progress = append(progress, pr.Message) })
		if err != nil {
			t.Fatalf("old_echo: %v", err)
		}
		if want := "echo: hi; approval: approved; network: none"; res.Text != want {
			t.Errorf("old_echo: %q, want %q", res.Text, want)
		}
		if len(progress) != 1 || progress[0] != "echoing" {
			t.Errorf("old_echo's progress: %q, want [echoing]", progress)
		}
		if len(host.asked) != 1 {
			t.Errorf("questions the host was asked: %q, want one", host.asked)
		}
		_, err = p.Execute(context.Background(), sdk.CallInfo{Tool: "old_echo"}, []byte(`{"text":" "}`), nil)
		if te, ok := sdk.AsToolError(err); !ok || te.Code != sdk.CodeInvalidInput {
			t.Errorf("old_echo with no text: %v, want invalid_input", err)
		}
	})
}

// TestLaunch_RefusesOtherProtocols: a plugin whose handshake names a
// version the host does not speak is refused, the message naming both and
// what to do.
func TestLaunch_RefusesOtherProtocols(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version, fix string
	}{
		{"0", "rebuild it against an sdk of protocol 2"},
		{"3", "upgrade yagent to a release that speaks protocol 3"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			script := "#!/bin/sh\necho '1|" + tc.version + "|unix|/nonexistent/plugin.sock|grpc|'\nexec sleep 30\n"
			if err := os.WriteFile(filepath.Join(dir, BinaryPrefix+"other"), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			m := newManager(t, Options{Dirs: []string{dir}})
			plugins, _, err := m.Load(context.Background())
			if err != nil || len(plugins) != 1 {
				t.Fatalf("Load: %v, %d plugins", err, len(plugins))
			}
			var ve *remote.VersionError
			if !errors.As(plugins[0].Refused, &ve) {
				t.Fatalf("plugin of protocol %s: refused with %v, want a *remote.VersionError", tc.version, plugins[0].Refused)
			}
			msg := plugins[0].Refused.Error()
			if !strings.Contains(msg, "speaks plugin protocol "+tc.version+"; this yagent speaks 2 and 1") || !strings.Contains(msg, tc.fix) {
				t.Errorf("refusal: %q, want the versions and %q", msg, tc.fix)
			}
		})
	}
}
