package guard

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/yagent/yagent/host/adapter"
	"github.com/yagent/yagent/host/bus"
	"github.com/yagent/yagent/host/config"
	"github.com/yagent/yagent/host/session"
	"github.com/yagent/yagent/sdk"
)

func spec(effect sdk.Effect, roles map[string]sdk.Role) sdk.Spec {
	return sdk.Spec{Name: "t", Effect: effect, Roles: roles}
}

func TestWorkspaceGuard_Check(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	other := filepath.Join(root, "other")
	for _, d := range []string{ws, other, filepath.Join(ws, "sub"), filepath.Join(root, "skills")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(other, filepath.Join(ws, "escape")); err != nil {
		t.Fatal(err)
	}
	prof := &config.Profile{SkillDirs: []string{filepath.Join(root, "skills")}, Network: config.NetworkRules{Allow: []string{"*.example.com", "go.dev"}}}
	g := New(Options{Workspace: ws, Profile: prof})
	read := map[string]sdk.Role{"path": sdk.RolePathRead}
	write := map[string]sdk.Role{"path": sdk.RolePathWrite}
	shell := map[string]sdk.Role{"command": sdk.RoleCommand, "is_dangerous": sdk.RoleDangerFlag}
	url := map[string]sdk.Role{"url": sdk.RoleURL}
	for _, tc := range []struct {
		name    string
		spec    sdk.Spec
		args    map[string]any
		trusted bool
		want    adapter.Action
		path    string
	}{
		{"none", spec(sdk.EffectNone, nil), nil, true, adapter.Allow, ""},
		{"flow", spec(sdk.EffectFlow, nil), nil, true, adapter.Allow, ""},
		{"read inside", spec(sdk.EffectRead, read), map[string]any{"path": "sub/a.go"}, true, adapter.Allow, ""},
		{"read the workspace itself", spec(sdk.EffectRead, read), map[string]any{"path": "."}, true, adapter.Allow, ""},
		{"read outside", spec(sdk.EffectRead, read), map[string]any{"path": filepath.Join(other, "x")}, true, adapter.Ask, filepath.Join(other, "x")},
		{"read through a symlink", spec(sdk.EffectRead, read), map[string]any{"path": "escape/x"}, true, adapter.Ask, filepath.Join(other, "x")},
		{"read with .. ", spec(sdk.EffectRead, read), map[string]any{"path": "../other"}, true, adapter.Ask, other},
		{"read prefix lookalike", spec(sdk.EffectRead, read), map[string]any{"path": ws + "2/x"}, true, adapter.Ask, ws + "2/x"},
		{"read skill folder", spec(sdk.EffectRead, read), map[string]any{"path": filepath.Join(root, "skills", "s", "SKILL.md")}, true, adapter.Allow, ""},
		{"read NUL", spec(sdk.EffectRead, read), map[string]any{"path": "a\x00b"}, true, adapter.Ask, ""},
		{"read file URL", spec(sdk.EffectRead, read), map[string]any{"path": "file:///etc/passwd"}, true, adapter.Ask, ""},
		{"write inside, not yet existing", spec(sdk.EffectWrite, write), map[string]any{"path": "new/dir/f.txt"}, true, adapter.Allow, ""},
		{"write the workspace itself", spec(sdk.EffectWrite, write), map[string]any{"path": ws}, true, adapter.Ask, ws},
		{"write outside", spec(sdk.EffectWrite, write), map[string]any{"path": filepath.Join(other, "f")}, true, adapter.Ask, filepath.Join(other, "f")},
		{"exec plain", spec(sdk.EffectExec, shell), map[string]any{"command": "go test ./... > /dev/null 2>&1"}, true, adapter.Allow, ""},
		{"exec dangerous", spec(sdk.EffectExec, shell), map[string]any{"command": "ls", "is_dangerous": true}, true, adapter.Ask, ""},
		{"exec outside path", spec(sdk.EffectExec, shell), map[string]any{"command": "cat '/etc/passwd'"}, true, adapter.Ask, "/etc/passwd"},
		{"exec option path", spec(sdk.EffectExec, shell), map[string]any{"command": "tool --out=/etc/x"}, true, adapter.Ask, "/etc/x"},
		{"exec root", spec(sdk.EffectExec, shell), map[string]any{"command": "rm -rf /"}, true, adapter.Ask, "/"},
		{"exec the workspace itself", spec(sdk.EffectExec, shell), map[string]any{"command": "rm -rf " + ws}, true, adapter.Ask, ws},
		{"exec a folder holding the workspace", spec(sdk.EffectExec, shell), map[string]any{"command": "rm -rf " + root}, true, adapter.Ask, root},
		{"exec inside path", spec(sdk.EffectExec, shell), map[string]any{"command": "cat " + filepath.Join(ws, "sub", "a")}, true, adapter.Allow, ""},
		{"exec safe system paths", spec(sdk.EffectExec, shell), map[string]any{"command": "/usr/bin/env ls /tmp/x /tmpx/../usr/lib"}, true, adapter.Allow, ""},
		{"exec tmp lookalike", spec(sdk.EffectExec, shell), map[string]any{"command": "ls /tmpx"}, true, adapter.Ask, "/tmpx"},
		{"exec without roles, trusted", spec(sdk.EffectExec, nil), map[string]any{"input": "x"}, true, adapter.Allow, ""},
		{"unpinned plugin", spec(sdk.EffectExec, nil), map[string]any{"input": "x"}, false, adapter.Ask, ""},
		{"network allowed host", spec(sdk.EffectNetwork, url), map[string]any{"url": "https://docs.example.com/a"}, true, adapter.Allow, ""},
		{"network exact host", spec(sdk.EffectNetwork, url), map[string]any{"url": "https://go.dev/doc"}, true, adapter.Allow, ""},
		{"network other host", spec(sdk.EffectNetwork, url), map[string]any{"url": "https://evil.test/"}, true, adapter.Ask, ""},
		{"browser http", spec(sdk.EffectBrowser, url), map[string]any{"url": "https://evil.test/"}, true, adapter.Allow, ""},
		{"browser file scheme", spec(sdk.EffectBrowser, url), map[string]any{"url": "file:///etc/passwd"}, true, adapter.Ask, ""},
		{"browser always asks", sdk.Spec{Name: "t", Effect: sdk.EffectBrowser, AlwaysAsk: true}, map[string]any{"function": "() => 1"}, true, adapter.Ask, ""},
		{"unknown effect", spec("teleport", nil), nil, true, adapter.Ask, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := g.Check(context.Background(), adapter.GuardRequest{Spec: tc.spec, Args: tc.args, Workspace: ws, Trusted: tc.trusted})
			if d.Action != tc.want {
				t.Fatalf("Check = %v (%s), want %v", d.Action, d.Reason, tc.want)
			}
			if tc.want == adapter.Ask && d.Reason == "" {
				t.Fatal("an ask must say why")
			}
			if cmd, _ := tc.args["command"].(string); tc.want == adapter.Ask && cmd != "" && d.Command != cmd {
				t.Fatalf("Command = %q, want %q for the user to see", d.Command, cmd)
			}
			if tc.path != "" && !slices.Contains(d.Paths, tc.path) {
				t.Fatalf("Paths = %v, want %s among them", d.Paths, tc.path)
			}
			if yd := New(Options{Workspace: ws, Yolo: true}).Check(context.Background(), adapter.GuardRequest{Spec: tc.spec, Args: tc.args, Trusted: tc.trusted}); yd.Action != adapter.Allow {
				t.Fatalf("YOLO Check = %v, want allow", yd.Action)
			}
		})
	}
}

type answerer struct {
	ans   session.ApprovalAnswer
	asked []session.ApprovalPrompt
}

func (a *answerer) Approve(_ context.Context, p session.ApprovalPrompt) (session.ApprovalAnswer, error) {
	a.asked = append(a.asked, p)
	return a.ans, nil
}
func (a *answerer) Help(context.Context, string) (string, error) { return "", nil }

func TestApprover(t *testing.T) {
	t.Parallel()
	d := adapter.Decision{Action: adapter.Ask, Reason: "outside", Paths: []string{"/etc/x"}}
	sp := sdk.Spec{Name: "read_it"}

	t.Run("yolo", func(t *testing.T) {
		t.Parallel()
		ok, _, paths := NewApprover(ApproverOptions{Yolo: true}).Authorize(t.Context(), session.New("s"), sp, d)
		if !ok || len(paths) != 1 {
			t.Fatalf("yolo: ok=%v paths=%v", ok, paths)
		}
	})
	t.Run("no answerer", func(t *testing.T) {
		t.Parallel()
		if ok, _, _ := NewApprover(ApproverOptions{}).Authorize(t.Context(), session.New("s"), sp, d); ok {
			t.Fatal("nobody to ask must not allow")
		}
	})
	t.Run("declined, reason fed back", func(t *testing.T) {
		t.Parallel()
		s := session.New("s")
		s.SetAnswerer(&answerer{ans: session.ApprovalAnswer{Reason: "use the copy in the workspace"}})
		ok, why, _ := NewApprover(ApproverOptions{}).Authorize(t.Context(), s, sp, d)
		if ok || why != "use the copy in the workspace" {
			t.Fatalf("ok=%v why=%q", ok, why)
		}
	})
	t.Run("session scope becomes a pass", func(t *testing.T) {
		t.Parallel()
		b := bus.New()
		sub := b.Subscribe(4)
		defer sub.Close()
		s := session.New("s")
		a := &answerer{ans: session.ApprovalAnswer{Approved: true, Scope: session.ScopeSession}}
		s.SetAnswerer(a)
		ap := NewApprover(ApproverOptions{Bus: b})
		for range 2 {
			if ok, _, paths := ap.Authorize(t.Context(), s, sp, d); !ok || paths[0] != "/etc/x" {
				t.Fatalf("ok=%v paths=%v", ok, paths)
			}
		}
		if len(a.asked) != 1 || !strings.Contains(a.asked[0].Reason, "outside") || len(a.asked[0].RequestID) != 36 {
			t.Fatalf("asked %+v; want one prompt with a request id", a.asked)
		}
		need, resp := <-sub.Critical(), <-sub.Critical()
		if need.Type != bus.UserHelpNeeded || resp.Type != bus.UserHelpResponse || need.RequestID != a.asked[0].RequestID || resp.RequestID != need.RequestID {
			t.Fatalf("events %+v / %+v", need, resp)
		}
	})
	t.Run("once scope asks again", func(t *testing.T) {
		t.Parallel()
		s := session.New("s")
		a := &answerer{ans: session.ApprovalAnswer{Approved: true, Scope: session.ScopeOnce}}
		s.SetAnswerer(a)
		ap := NewApprover(ApproverOptions{})
		ap.Authorize(t.Context(), s, sp, d)
		ap.Authorize(t.Context(), s, sp, d)
		if len(a.asked) != 2 || s.Granted(sp.Name) {
			t.Fatalf("asked %d times, granted=%v; want 2 and no pass", len(a.asked), s.Granted(sp.Name))
		}
	})
}

func TestCommandPaths(t *testing.T) {
	t.Parallel()
	got := commandPaths(`X=/opt/a cat "/etc/$USER/x" ~/y ../z > /dev/null; echo 'hi' --f=/srv/q`)
	want := []string{"/opt/a", "/etc/$/x", "~/y", "../z", "/dev/null", "/srv/q"}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("commandPaths: %v lacks %q", got, w)
		}
	}
}
