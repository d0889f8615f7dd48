package authz

import (
	"context"

	"github.com/yagent/yagent/call/session"
)

// Remote is the answerer of a session whose user is played by a test on
// the bus: the test watches user_help_needed and publishes
// user_help_response with the same request_id. The loop hands Remote each
// question as it would any answerer; its methods only wait for the
// question to end, which the answer on the bus does.
type Remote struct{}

var _ session.Answerer = Remote{}

// Approve waits for ctx to end: the answer comes over the bus.
func (Remote) Approve(ctx context.Context, _ session.ApprovalPrompt) (session.ApprovalAnswer, error) {
	<-ctx.Done()
	return session.ApprovalAnswer{}, ctx.Err()
}

// Help waits for ctx to end: the answer comes over the bus.
func (Remote) Help(ctx context.Context, _ string) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}
