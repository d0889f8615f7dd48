package authz

import (
	"context"

	"github.com/yagent/yagent/host/session"
)

// Remote is the answerer of a session whose user answers on the bus: a UI,
// or a test playing the user, that watches user_help_needed and publishes
// user_help_response with the same request_id. The loop never calls it;
// its methods only wait for ctx to end.
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

func (Remote) remote() {}

func isRemote(a session.Answerer) bool {
	_, ok := a.(interface{ remote() })
	return ok
}
