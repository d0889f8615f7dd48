package audit_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/yagent/yagent/call/guard"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/host/audit"
	"github.com/yagent/yagent/host/authz"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// TestAudit_ApprovalLines: each request a running call's plugin makes (an
// exec, input typed into a program, paths) gets an approval line with
// its answer and who gave it, argv and commands redacted, input to a
// program that is not a shell not recorded at all.
func TestAudit_ApprovalLines(t *testing.T) {
	t.Parallel()
	ws, dir := t.TempDir(), filepath.Join(t.TempDir(), "audit")
	g := guard.New(guard.Options{Workspace: ws, Home: t.TempDir(), Policy: &policy.Rules{Exec: policy.ExecRules{Rules: []policy.ExecRule{
		{Action: policy.ExecAsk, Program: "make"}, {Action: policy.ExecDeny, Program: "shred"},
	}}}})
	ap := authz.NewApprover(authz.ApproverOptions{Passes: &authz.Passes{}, Loop: authz.NewLoop(authz.LoopOptions{})})
	w := audit.NewWriter(audit.WriterOptions{Dir: dir})
	ob := audit.New(audit.Options{Writer: w})
	ph := authz.NewPluginHost(ap, g)
	ph.SetRecorder(ob)

	sess := newSession(session.ApprovalAnswer{Approved: true}, session.ApprovalAnswer{Approved: false}, session.ApprovalAnswer{Approved: true})
	ctx := session.NewContext(t.Context(), sess)
	call := sdk.CallInfo{ID: "c1", Tool: "run_bash", Workspace: ws}
	reqs := []sdk.ApprovalRequest{
		{Kind: sdk.ApprovalExec, Program: "/usr/bin/make", Argv: []string{"make", "--token", "TOK-SECRET-1", "all"}},
		{Kind: sdk.ApprovalExec, Program: "/usr/bin/shred", Argv: []string{"shred", "x"}},
		{Kind: sdk.ApprovalStdin, TaskID: "t1", Program: "/usr/bin/python3", Input: "PROMPT-SECRET-2\n"},
		{Reason: "read the config", Paths: []string{"/etc/x.conf"}},
	}
	for _, r := range reqs {
		if _, err := ph.RequestApproval(ctx, "shell", call, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := ob.Close(); err != nil {
		t.Fatal(err)
	}
	lines := readJSONLines(t, filepath.Join(dir, audit.LiveName))
	want := []struct {
		ask, by  string
		approved bool
	}{{"exec", "user", true}, {"exec", "", false}, {"stdin", "user", false}, {"paths", "user", true}}
	if len(lines) != len(want) {
		t.Fatalf("%d lines %v, want %d", len(lines), lines, len(want))
	}
	for i, l := range lines {
		ans, _ := l["answer"].(map[string]any)
		by, _ := ans["by"].(string)
		if l["kind"] != "approval" || l["ask"] != want[i].ask || by != want[i].by || ans["approved"] != want[i].approved ||
			l["call"] != "c1" || l["session"] != sess.ID() || l["tool"] != "run_bash" {
			t.Errorf("line %d: %v; want ask %s by %q approved %v", i, l, want[i].ask, want[i].by, want[i].approved)
		}
	}
	if argv, _ := lines[0]["argv"].([]any); len(argv) != 4 || argv[2] != audit.Redacted {
		t.Errorf("argv %v, want the token redacted", lines[0]["argv"])
	}
	if _, ok := lines[2]["command"]; ok {
		t.Errorf("input typed into python3 was recorded: %v", lines[2])
	}
	all := toString(lines)
	for _, s := range []string{"TOK-SECRET-1", "PROMPT-SECRET-2"} {
		if strings.Contains(all, s) {
			t.Errorf("the log holds %s", s)
		}
	}
}
