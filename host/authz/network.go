package authz

import (
	"context"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
)

// NetworkTool is the name a question about host is asked under, and the
// session's pass for it kept under: a pass for one host, never for a
// tool.
func NetworkTool(host string) string { return "network:" + host }

// Network resolves a question the session's egress proxy has about one
// host the profile leaves open: the passes (-y, the session's pass for
// that host or for every tool, the project's), else the session's user,
// while the connection waits. Once approves the connection; session, the
// host for the rest of the session; all and project as for a tool. A
// managed or profile deny never comes here: the proxy refused it already.
func (a *Approver) Network(ctx context.Context, sess *session.Session, host, reason string) adapter.Approval {
	return a.ask(ctx, sess, session.ApprovalPrompt{Tool: NetworkTool(host), Reason: reason})
}
