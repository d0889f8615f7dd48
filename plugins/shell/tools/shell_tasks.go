package tools

import (
	"context"
	_ "embed"

	"github.com/yagent/yagent/plugins/shell/runner"
	"github.com/yagent/yagent/sdk"
)

// ShellTasksName is the name of the tool that lists tasks.
const ShellTasksName = "shell_tasks"

//go:embed shell_tasks.md
var shellTasksDescription string

type shellTasksInput struct{}

// ShellTasks returns the shell_tasks tool.
func ShellTasks(m *runner.Manager) sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        ShellTasksName,
		Description: shellTasksDescription,
		Brief:       "List shell tasks.",
		Effect:      sdk.EffectNone,
		ReadOnly:    true,
	}, func(ctx context.Context, _ shellTasksInput) (*sdk.Result, error) {
		return m.Tasks(ctx)
	})
}
