package guard

import (
	"log/slog"

	"github.com/yagent/yagent/host/authz"
	"github.com/yagent/yagent/host/bus"
)

// ApproverOptions configures NewApprover.
type ApproverOptions struct {
	// Yolo (-y) approves everything without asking.
	Yolo bool
	// Bus carries the questions and answers (user_help_needed /
	// user_help_response); nil = a private dispatcher.
	Bus *bus.Dispatcher
	// Logger; nil = slog.Default().
	Logger *slog.Logger
}

// NewApprover returns the approver of the authorization loop with YOLO and
// session passes and no project passes: the surface's default. A host
// wires authz.NewApprover itself, with its settings file.
func NewApprover(opts ApproverOptions) *authz.Approver {
	return authz.NewApprover(authz.ApproverOptions{
		Passes: &authz.Passes{Yolo: opts.Yolo},
		Loop:   authz.NewLoop(authz.LoopOptions{Bus: opts.Bus, Logger: opts.Logger}),
		Logger: opts.Logger,
	})
}
