package tools

import (
	"context"
	_ "embed"

	"github.com/yagent/yagent/plugins/shell/runner"
	"github.com/yagent/yagent/sdk"
)

// ShellCancelName is the name of the tool that stops a task.
const ShellCancelName = "shell_cancel"

//go:embed shell_cancel.md
var shellCancelDescription string

type shellCancelInput struct {
	TaskID string `json:"task_id"`
}

// ShellCancel returns the shell_cancel tool.
func ShellCancel(m *runner.Manager) sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        ShellCancelName,
		Description: shellCancelDescription,
		Brief:       "Stop a shell task.",
		Effect:      sdk.EffectExec,
	}, func(ctx context.Context, in shellCancelInput) (*sdk.Result, error) {
		return m.Cancel(ctx, in.TaskID)
	})
}
