package authz_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/yagent/yagent/call/guard"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/host/authz"
	"github.com/yagent/yagent/host/config"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

type fixedAnswerer struct {
	yes   bool
	asked *[]session.ApprovalPrompt
}

func (a fixedAnswerer) Approve(_ context.Context, p session.ApprovalPrompt) (session.ApprovalAnswer, error) {
	*a.asked = append(*a.asked, p)
	return session.ApprovalAnswer{Approved: a.yes, Reason: "not now"}, nil
}
func (fixedAnswerer) Help(context.Context, string) (string, error) { return "", nil }

// TestPluginHost_ExecJudged: an exec a command's tree makes at run time is
// judged by the profile's exec rules: deny refuses with the rule (under -y
// too), allow approves without a question, ask goes to the passes and the
// user with a reason naming the file, the command line and the rule.
// Without a session in flight only an allow gets through.
func TestPluginHost_ExecJudged(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"/usr/bin/printenv", "/usr/bin/env"} {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("%s is missing here: %v", f, err)
		}
	}
	prof := &config.Profile{Exec: policy.ExecRules{Rules: []policy.ExecRule{
		{Action: policy.ExecDeny, Program: "printenv", Args: []string{"SECRET"}},
		{Action: policy.ExecAsk, Program: "printenv"},
	}}}
	g := guard.New(guard.Options{Workspace: t.TempDir(), Home: t.TempDir(), Policy: prof.Rules()})
	const askRule = "{action: ask, program: printenv}"
	tests := []struct {
		name       string
		yolo       bool
		noSession  bool
		answerer   *bool // nil: nobody to ask
		program    string
		argv       []string
		approved   bool
		unanswered bool
		asked      bool
		reason     string
	}{
		{name: "allow runs without a question", program: "/usr/bin/env", argv: []string{"env"}, approved: true},
		{name: "deny refused", program: "/usr/bin/printenv", argv: []string{"printenv", "SECRET"}, reason: "{action: deny, program: printenv, args: [SECRET]} denies"},
		{name: "deny stands under -y", yolo: true, program: "/usr/bin/printenv", argv: []string{"printenv", "SECRET"}, reason: "this rule stands"},
		{name: "ask approved by -y", yolo: true, program: "/usr/bin/printenv", argv: []string{"printenv", "FOO"}, approved: true},
		{name: "ask approved by the user", answerer: ptr(true), program: "/usr/bin/printenv", argv: []string{"printenv", "FOO"}, approved: true, asked: true},
		{name: "ask declined by the user", answerer: ptr(false), program: "/usr/bin/printenv", argv: []string{"printenv", "FOO"}, asked: true, reason: "not now"},
		{name: "ask with nobody to answer", program: "/usr/bin/printenv", argv: []string{"printenv", "FOO"}, unanswered: true,
			reason: "the command's tree is about to run /usr/bin/printenv (printenv FOO), which the profile rule " + askRule + " asks about"},
		{name: "no session: allow approved", noSession: true, program: "/usr/bin/env", argv: []string{"env"}, approved: true},
		{name: "no session: ask refused", noSession: true, yolo: true, program: "/usr/bin/printenv", argv: []string{"printenv", "FOO"}, reason: "nobody can be asked"},
		{name: "no session: deny refused", noSession: true, program: "/usr/bin/printenv", argv: []string{"printenv", "SECRET"}, reason: "denies"},
		{name: "unidentified gets the strictest rule", yolo: true, program: "", argv: []string{"x"}, reason: "could not identify (a memfd or a deleted file) (x); with the profile rule {action: deny"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			host := authz.NewPluginHost(authz.NewApprover(authz.ApproverOptions{Passes: &authz.Passes{Yolo: tt.yolo}}), g)
			ctx := t.Context()
			var asked []session.ApprovalPrompt
			if !tt.noSession {
				sess := session.New("s")
				if tt.answerer != nil {
					sess.SetAnswerer(fixedAnswerer{yes: *tt.answerer, asked: &asked})
				}
				ctx = session.NewContext(ctx, sess)
			}
			resp, err := host.RequestApproval(ctx, "shell", sdk.CallInfo{ID: "c1", Tool: "run_bash"}, sdk.ApprovalRequest{
				Kind: sdk.ApprovalExec, Program: tt.program, Argv: tt.argv,
			})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Approved != tt.approved || resp.Unanswered != tt.unanswered || !strings.Contains(resp.Reason, tt.reason) {
				t.Errorf("RequestApproval(exec %s %q) = %+v, want approved=%v unanswered=%v reason holding %q", tt.program, tt.argv, resp, tt.approved, tt.unanswered, tt.reason)
			}
			if (len(asked) > 0) != tt.asked {
				t.Errorf("the user was asked %d times, want asked=%v", len(asked), tt.asked)
			}
			if tt.asked && (asked[0].Command != "printenv FOO" || !strings.Contains(asked[0].Reason, askRule) || asked[0].Tool != "run_bash") {
				t.Errorf("prompt %+v, want the command line, the rule and the tool", asked[0])
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
