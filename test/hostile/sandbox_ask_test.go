package hostile

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sbAsker plays a user answering over MCP elicitation: it approves every
// question, except those naming decline when decline is set.
type sbAsker struct {
	decline string
	mu      sync.Mutex
	asked   []string
}

func (a *sbAsker) handle(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, r.Params.Message)
	if a.decline != "" && strings.Contains(r.Params.Message, a.decline) {
		return &mcp.ElicitResult{Action: "decline", Content: map[string]any{"reason": "not that"}}, nil
	}
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"scope": "once"}}, nil
}

// askedAbout reports whether a question named s.
func (a *sbAsker) askedAbout(s string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, m := range a.asked {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// TestSandboxAskAtRunTime: with the user's rule asking before printenv,
// a printenv that make starts (where the guard cannot see it) is asked at
// the exec through the real authorization loop: approved over MCP
// elicitation or by -y it runs, declined or with nobody to answer it
// does not.
func TestSandboxAskAtRunTime(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		asker *sbAsker // nil: a client that cannot answer
		flags []string
		shows bool // printenv runs and shows the marker
	}{
		{name: "approved over elicitation", asker: &sbAsker{}, shows: true},
		{name: "declined over elicitation", asker: &sbAsker{decline: "printenv"}},
		{name: "approved by -y", flags: []string{"-y"}, shows: true},
		{name: "nobody to answer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sbNeed(t, "make", "printenv")
			e := newEnv(t)
			marker := e.secret("unused")
			e.extraEnv = []string{"X=" + marker}
			execConfig(e, "{action: ask, program: printenv}")
			e.write("Makefile", "all:\n\t@printenv X\n")
			var c *client
			if tc.asker != nil {
				c = e.serveWith(&mcp.ClientOptions{ElicitationHandler: tc.asker.handle}, tc.flags...)
			} else {
				c = e.serve(tc.flags...)
			}
			r := sbRun(t, c, "make", 0)
			if got := strings.Contains(sbText(r), marker); got != tc.shows {
				t.Errorf("printenv ran: %v, want %v: %s", got, tc.shows, r)
			}
			if tc.asker != nil && !tc.asker.askedAbout("printenv") {
				t.Errorf("the exec of printenv was not asked about at run time: asked %q; %s", tc.asker.asked, r)
			}
		})
	}
}
