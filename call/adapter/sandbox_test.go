package adapter_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/guard"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/host/authz"
	"github.com/yagent/yagent/host/config"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

type infoRecorder struct {
	mu   sync.Mutex
	info *sdk.CallInfo
}

func (r *infoRecorder) Execute(_ context.Context, info sdk.CallInfo, _ json.RawMessage, _ func(sdk.Progress)) (*sdk.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.info = &info
	return &sdk.Result{Text: "ok"}, nil
}

type yesAnswerer struct{}

func (yesAnswerer) Approve(context.Context, session.ApprovalPrompt) (session.ApprovalAnswer, error) {
	return session.ApprovalAnswer{Approved: true}, nil
}
func (yesAnswerer) Help(context.Context, string) (string, error) { return "", nil }

// TestAdapterCall_SandboxWidensByApproval: a path an ask approved for the
// call (by the user or by -y) may be written by its processes; a path the
// read whitelist let through without asking may only be read; a refused
// ask runs nothing.
func TestAdapterCall_SandboxWidensByApproval(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	ws, outside, shared := filepath.Join(root, "ws"), filepath.Join(root, "outside"), filepath.Join(root, "shared")
	for _, d := range []string{ws, outside, shared} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	prof := &config.Profile{ReadPaths: []string{shared}, Sandbox: policy.SandboxRules{Mode: policy.SandboxOn, Network: policy.NetworkOn}}
	target := filepath.Join(outside, "f.txt")
	readTarget := filepath.Join(shared, "g.txt")
	for _, tt := range []struct {
		name        string
		effect      sdk.Effect
		role        sdk.Role
		path        string
		yolo, user  bool
		write, read string // a path that must be granted to writes / in Read only
	}{
		{"write approved with -y", sdk.EffectWrite, sdk.RolePathWrite, target, true, false, target, ""},
		{"write approved by the user", sdk.EffectWrite, sdk.RolePathWrite, target, false, true, target, ""},
		{"read whitelisted without asking", sdk.EffectRead, sdk.RolePathRead, readTarget, false, false, "", readTarget},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &infoRecorder{}
			spec := sdk.Spec{Name: "probe", Description: "A probe.", Effect: tt.effect, Roles: map[string]sdk.Role{"path": tt.role},
				InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
			a := adapter.New(spec, "test", toolspec.Warm, rec, adapter.Options{Workspace: ws, Trusted: true})
			a.AttachGuard(guard.New(guard.Options{Workspace: ws, Home: root, Policy: prof.Rules()}),
				authz.NewApprover(authz.ApproverOptions{Passes: &authz.Passes{Yolo: tt.yolo}}))
			sess := session.New("s")
			if tt.user {
				sess.SetAnswerer(yesAnswerer{})
			}
			in, _ := json.Marshal(map[string]string{"path": tt.path})
			if res := a.Call(t.Context(), sess, in); res.Code != "" {
				t.Fatalf("call: %s %s", res.Code, res.Text)
			}
			sb := rec.info.Sandbox
			if sb == nil || sb.Mode != sdk.SandboxOn {
				t.Fatalf("CallInfo.Sandbox = %+v, want mode on", sb)
			}
			if tt.write != "" && !slices.Contains(sb.Granted, tt.write) {
				t.Errorf("Sandbox.Granted %q, want the approved %s", sb.Granted, tt.write)
			}
			if tt.read != "" && (!slices.Contains(sb.Read, tt.read) || slices.Contains(sb.Granted, tt.read) || slices.Contains(sb.Write, tt.read)) {
				t.Errorf("Sandbox read %q write %q granted %q, want %s readable only", sb.Read, sb.Write, sb.Granted, tt.read)
			}
			if !slices.Contains(sb.Read, shared) {
				t.Errorf("Sandbox.Read %q, want the read root %s", sb.Read, shared)
			}
		})
	}
}

// TestAdapterCall_SandboxOption: Options.Sandbox, when set, decides the
// call's sandbox and is told whether an ask was approved.
func TestAdapterCall_SandboxOption(t *testing.T) {
	t.Parallel()
	rec := &infoRecorder{}
	var gotApproved []bool
	spec := sdk.Spec{Name: "probe", Description: "A probe.", Effect: sdk.EffectWrite, Roles: map[string]sdk.Role{"path": sdk.RolePathWrite},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
	ws := t.TempDir()
	a := adapter.New(spec, "test", toolspec.Warm, rec, adapter.Options{Workspace: ws, Trusted: true,
		Sandbox: func(_ sdk.Spec, _ *session.Session, d adapter.Decision, approved bool) *sdk.Sandbox {
			gotApproved = append(gotApproved, approved)
			return &sdk.Sandbox{Mode: sdk.SandboxRequired, Write: d.Paths}
		}})
	a.AttachGuard(guard.New(guard.Options{Workspace: ws}), authz.NewApprover(authz.ApproverOptions{Passes: &authz.Passes{Yolo: true}}))
	sess := session.New("s")
	for _, p := range []string{filepath.Join(ws, "in.txt"), "/nonexistent-yagent/out.txt"} {
		in, _ := json.Marshal(map[string]string{"path": p})
		if res := a.Call(t.Context(), sess, in); res.Code != "" {
			t.Fatalf("call: %s %s", res.Code, res.Text)
		}
	}
	if !slices.Equal(gotApproved, []bool{false, true}) || rec.info.Sandbox.Mode != sdk.SandboxRequired {
		t.Errorf("approved %v sandbox %+v, want [false true] and the option's sandbox", gotApproved, rec.info.Sandbox)
	}
}

// TestAdapterCall_TempFolderTravels: the session's temp folder is made for
// its call, judged by (a path under /var/tmp, which it stands for, is its
// file, read without asking), carried with the call, and kept on the
// session.
func TestAdapterCall_TempFolderTravels(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	ws, tmp := filepath.Join(root, "ws"), filepath.Join(root, "s.1.2.aa")
	for _, d := range []string{ws, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tf := &sdk.TempFolder{Dir: tmp, Over: []string{"/var/tmp"}}
	var asked []string
	rec := &infoRecorder{}
	spec := sdk.Spec{Name: "probe", Description: "A probe.", Effect: sdk.EffectRead, Roles: map[string]sdk.Role{"path": sdk.RolePathRead},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
	a := adapter.New(spec, "test", toolspec.Warm, rec, adapter.Options{Workspace: ws, Trusted: true,
		Temp: func(s *session.Session) *sdk.TempFolder { asked = append(asked, s.ID()); return tf }})
	a.AttachGuard(guard.New(guard.Options{Workspace: ws, Home: root}), authz.NewApprover(authz.ApproverOptions{}))
	sess := session.New("s")
	res := a.Call(context.Background(), sess, json.RawMessage(`{"path":"/var/tmp/f"}`))
	if res.Code != "" {
		t.Fatalf("a read of /var/tmp/f: %s %s", res.Code, res.Text)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.info == nil || rec.info.Temp != tf || sess.Temp() != tf || !slices.Equal(asked, []string{"s"}) {
		t.Fatalf("the call carried %+v, the session keeps %+v (asked for %v); want the session's folder", rec.info, sess.Temp(), asked)
	}
}
