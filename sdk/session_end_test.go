package sdk_test

import (
	"context"
	"os"
	"testing"

	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/plugintest"
)

// TestEndSession_ReachesOnSessionEnd: the host's EndSession runs the
// plugin's OnSessionEnd with the session's id, under a context that names
// the session and reports process groups to the host; a plugin without
// OnSessionEnd answers it as done.
func TestEndSession_ReachesOnSessionEnd(t *testing.T) {
	ended := make(chan sdk.CallInfo, 1)
	pgid := os.Getpid() // a live group leader is not required: the host records what it is told
	p := sdk.Plugin{Name: "ender", Version: "0", Tools: []sdk.Tool{echoTool()},
		OnSessionEnd: func(ctx context.Context, id string) error {
			info := sdk.CallFrom(ctx)
			if info.SessionID != id {
				t.Errorf("OnSessionEnd(%q): the context names session %q", id, info.SessionID)
			}
			if err := sdk.HostFrom(ctx).ReportProcessGroup(ctx, pgid, false); err != nil {
				t.Errorf("report a group from OnSessionEnd: %v", err)
			}
			ended <- info
			return nil
		}}
	c := plugintest.Start(t, p, nil)
	if err := c.EndSession(context.Background(), "sess-1"); err != nil {
		t.Fatalf("EndSession: %v", err)
	}
	if info := <-ended; info.SessionID != "sess-1" {
		t.Errorf("OnSessionEnd ran for %q, want sess-1", info.SessionID)
	}
	reports := c.Host.GroupReports()
	if len(reports) != 1 || reports[0].PGID != pgid || reports[0].Live {
		t.Errorf("group reports from OnSessionEnd: %+v; want %d ended", reports, pgid)
	}

	bare := plugintest.Start(t, sdk.Plugin{Name: "bare", Version: "0", Tools: []sdk.Tool{echoTool()}}, nil)
	if err := bare.EndSession(context.Background(), "sess-1"); err != nil {
		t.Errorf("EndSession on a plugin without OnSessionEnd: %v", err)
	}
}

func echoTool() sdk.Tool {
	type in struct {
		Text string `json:"text"`
	}
	return sdk.NewTool(sdk.Spec{Name: "echo", Description: "Echo the text."}, func(_ context.Context, i in) (string, error) { return i.Text, nil })
}
