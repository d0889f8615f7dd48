package authz_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/host/authz"
	"github.com/yagent/yagent/sdk"
)

// commandGuard judges the command parameter of a request by a fixed table
// and records what it was asked.
type commandGuard struct {
	verdicts map[string]adapter.Action

	mu   sync.Mutex
	seen []adapter.GuardRequest
}

func (g *commandGuard) Check(_ context.Context, req adapter.GuardRequest) adapter.Decision {
	g.mu.Lock()
	g.seen = append(g.seen, req)
	g.mu.Unlock()
	for p, r := range req.Spec.Roles {
		if r != sdk.RoleCommand {
			continue
		}
		cmd, _ := req.Args[p].(string)
		a, ok := g.verdicts[cmd]
		if !ok {
			a = adapter.Ask
		}
		return adapter.Decision{Action: a, Reason: "rule for " + cmd, Command: cmd}
	}
	return adapter.Decision{Action: adapter.Allow}
}

// TestPluginHost_StdinIsJudged: text typed into a shell is judged as the
// command it is (allow, ask, deny as the guard says); text typed into any
// other program asks; -y turns asks into allow and leaves a deny standing.
func TestPluginHost_StdinIsJudged(t *testing.T) {
	t.Parallel()
	verdicts := map[string]adapter.Action{"ls": adapter.Allow, "printenv X": adapter.Deny, "cat /outside/s": adapter.Ask}
	tests := []struct {
		name           string
		yolo           bool
		shell          bool
		input          string
		wantApproved   bool
		wantUnanswered bool
		wantGuard      bool   // the guard judged the input
		wantReason     string // in the response's reason
		dir            string // the shell's folder; "" = the workspace root
		unseen         bool
		ahead          string // text that may wait for a shell
	}{
		{name: "shell, allowed command", shell: true, input: "ls", wantApproved: true, wantGuard: true},
		{name: "shell, command that asks", shell: true, input: "cat /outside/s", wantUnanswered: true, wantGuard: true, wantReason: "rule for cat /outside/s"},
		{name: "shell, denied command", shell: true, input: "printenv X", wantGuard: true, wantReason: "refuse"},
		{name: "other program asks", input: "ls", wantUnanswered: true, wantReason: "not a shell at its prompt"},
		{name: "yolo: shell ask allowed", yolo: true, shell: true, input: "cat /outside/s", wantApproved: true, wantGuard: true},
		{name: "yolo: other program allowed", yolo: true, input: "print(open('/etc/shadow').read())", wantApproved: true},
		{name: "yolo: deny stands", yolo: true, shell: true, input: "printenv X", wantGuard: true, wantReason: "this rule stands"},
		{name: "yolo: text waiting for a shell that it would refuse", yolo: true, input: "os.system('sh')\nprintenv X", ahead: "printenv X", wantGuard: true, wantReason: "one line per write_stdin"},
		{name: "yolo: text waiting for a shell that it would run", yolo: true, input: "a = 1\rls", ahead: "ls", wantApproved: true, wantGuard: true},
		{name: "shell elsewhere asks", shell: true, input: "ls", dir: "/srv", wantUnanswered: true, wantGuard: true, wantReason: "works in /srv"},
		{name: "shell elsewhere, deny stands", yolo: true, shell: true, input: "printenv X", dir: "/srv", wantGuard: true, wantReason: "this rule stands"},
		{name: "unseen line asks", shell: true, input: "ls", unseen: true, wantUnanswered: true, wantGuard: true, wantReason: "nobody saw"},
		{name: "yolo: unseen line allowed", yolo: true, shell: true, input: "ls", unseen: true, wantApproved: true, wantGuard: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := &commandGuard{verdicts: verdicts}
			ap := authz.NewApprover(authz.ApproverOptions{Passes: &authz.Passes{Yolo: tt.yolo}})
			host := authz.NewPluginHost(ap, g)
			ctx := session.NewContext(t.Context(), session.New("s"))
			call := sdk.CallInfo{ID: "c1", Tool: "write_stdin", SessionID: "s", Workspace: "/ws"}
			dir := tt.dir
			if dir == "" {
				dir = "/ws"
			}
			resp, err := host.RequestApproval(ctx, "shell", call, sdk.ApprovalRequest{
				Kind: sdk.ApprovalStdin, TaskID: "sh-1", Program: "/usr/bin/prog", Shell: tt.shell, Input: tt.input, Dir: dir, Unseen: tt.unseen, Ahead: tt.ahead,
			})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Approved != tt.wantApproved || resp.Unanswered != tt.wantUnanswered {
				t.Errorf("RequestApproval(%q) = %+v, want approved=%v unanswered=%v", tt.input, resp, tt.wantApproved, tt.wantUnanswered)
			}
			if !strings.Contains(resp.Reason, tt.wantReason) {
				t.Errorf("reason %q lacks %q", resp.Reason, tt.wantReason)
			}
			g.mu.Lock()
			defer g.mu.Unlock()
			if got := len(g.seen) > 0; got != tt.wantGuard {
				t.Fatalf("guard consulted = %v, want %v", got, tt.wantGuard)
			}
			if tt.wantGuard {
				req := g.seen[0]
				if req.Spec.Effect != sdk.EffectExec || req.Workspace != "/ws" || req.Session == nil {
					t.Errorf("guard request = %+v, want an exec call of the session in the call's workspace", req)
				}
			}
		})
	}
}

func TestPluginHost_UnknownKindRefused(t *testing.T) {
	t.Parallel()
	ap := authz.NewApprover(authz.ApproverOptions{Passes: &authz.Passes{Yolo: true}})
	host := authz.NewPluginHost(ap, &commandGuard{})
	resp, _ := host.RequestApproval(session.NewContext(t.Context(), session.New("s")), "x", sdk.CallInfo{ID: "c"}, sdk.ApprovalRequest{Kind: "teleport"})
	if resp.Approved || !strings.Contains(resp.Reason, "teleport") {
		t.Fatalf("unknown kind = %+v, want refused naming it", resp)
	}
}
