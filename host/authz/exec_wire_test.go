package authz_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/bus"
	"github.com/yagent/yagent/call/guard"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/host/authz"
	"github.com/yagent/yagent/host/config"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/plugintest"
)

// execPlugin plays the shell plugin's exec supervisor: its tool asks the
// host about an exec its tree is about to make, and says what the call's
// sandbox was.
func execPlugin() sdk.Plugin {
	return sdk.Plugin{Name: "shell", Version: "0", Tools: []sdk.Tool{
		sdk.NewTool(sdk.Spec{Name: "run_it"}, func(ctx context.Context, in struct {
			Argv []string `json:"argv"`
		}) (string, error) {
			sb := sdk.CallFrom(ctx).Sandbox
			if sb == nil || sb.Mode != sdk.SandboxOn || len(sb.Programs) != 1 || sb.Programs[0].Name != "printenv" {
				return "", sdk.Errorf(sdk.CodeToolFailed, "sandbox %+v, want mode on with printenv's files", sb)
			}
			resp, err := sdk.HostFrom(ctx).RequestApproval(ctx, sdk.ApprovalRequest{Kind: sdk.ApprovalExec,
				Program: "/usr/bin/printenv", Argv: in.Argv, Terminal: false})
			if err != nil {
				return "", err
			}
			if !resp.Approved {
				return "", sdk.Errorf(sdk.CodeDenied, "%s", resp.Reason)
			}
			return "ran", nil
		}),
	}}
}

// TestPluginHost_ExecOverTheWire: an exec the plugin asks about travels
// over gRPC with its argv, gets the profile's verdict, and an ask reaches
// the user through the real loop, who approves one and declines another.
func TestPluginHost_ExecOverTheWire(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/usr/bin/printenv"); err != nil {
		t.Skipf("/usr/bin/printenv is missing here: %v", err)
	}
	prof := &config.Profile{
		Sandbox: policy.SandboxRules{Mode: policy.SandboxOn, Network: policy.NetworkOn},
		Exec: policy.ExecRules{Rules: []policy.ExecRule{
			{Action: policy.ExecDeny, Program: "printenv", Args: []string{"SECRET"}},
			{Action: policy.ExecAsk, Program: "printenv"},
		}},
	}
	g := guard.New(guard.Options{Workspace: t.TempDir(), Home: t.TempDir(), Policy: prof.Rules()})
	b := bus.New()
	host := authz.NewPluginHost(authz.NewApprover(authz.ApproverOptions{Loop: authz.NewLoop(authz.LoopOptions{Bus: b})}), g)
	c := plugintest.Start(t, execPlugin(), &plugintest.Options{Approve: func(ctx context.Context, call sdk.CallInfo, req sdk.ApprovalRequest) (sdk.ApprovalResponse, error) {
		return host.RequestApproval(ctx, "shell", call, req)
	}})
	user := b.Subscribe(8)
	defer user.Close()
	answers := make(chan bool, 2)
	asked := make(chan string, 2)
	go func() {
		for ev := range user.Critical() {
			if ev.Type == bus.UserHelpNeeded {
				p, _ := ev.Payload.(session.ApprovalPrompt)
				asked <- p.Reason + " | " + p.Command
				b.Publish(bus.Event{Type: bus.UserHelpResponse, SessionID: ev.SessionID, RequestID: ev.RequestID, Payload: session.ApprovalAnswer{Approved: <-answers}})
			}
		}
	}()
	sess := session.New("s")
	sess.SetAnswerer(authz.Remote{})
	info := sdk.CallInfo{ID: "c1", Tool: "run_it", SessionID: "s", Sandbox: g.Sandbox(sdk.Spec{Roles: map[string]sdk.Role{"argv": sdk.RoleCommand}}, sess, adapter.Decision{}, false)}
	run := func(argv ...string) (string, error) {
		res, err := c.Call(session.NewContext(t.Context(), sess), "run_it", info, map[string]any{"argv": argv})
		if err != nil {
			return "", err
		}
		return res.Text, nil
	}

	answers <- true
	if out, err := run("printenv", "FOO"); err != nil || out != "ran" {
		t.Fatalf("approved ask: %q, %v; want it run", out, err)
	}
	if q := <-asked; !strings.Contains(q, "about to run /usr/bin/printenv (printenv FOO)") || !strings.Contains(q, "{action: ask, program: printenv}") || !strings.HasSuffix(q, "| printenv FOO") {
		t.Errorf("question %q, want the file, the command line and the rule", q)
	}
	answers <- false
	if _, err := run("printenv", "BAR"); err == nil {
		t.Fatal("declined ask ran")
	}
	<-asked
	_, err := run("printenv", "SECRET")
	if te, ok := sdk.AsToolError(err); !ok || !strings.Contains(te.Message, "{action: deny, program: printenv, args: [SECRET]} denies") {
		t.Fatalf("deny: %v, want refused naming the rule", err)
	}
	select {
	case q := <-asked:
		t.Errorf("the deny asked the user: %q", q)
	default:
	}
}
