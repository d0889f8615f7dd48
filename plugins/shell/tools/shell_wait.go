package tools

import (
	"context"
	_ "embed"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/yagent/yagent/plugins/shell/runner"
	"github.com/yagent/yagent/sdk"
)

// ShellWaitName is the name of the tool that waits for a task.
const ShellWaitName = "shell_wait"

//go:embed shell_wait.md
var shellWaitDescription string

type shellWaitInput struct {
	TaskID    string `json:"task_id"`
	TimeoutMS int    `json:"timeout_ms,omitempty"`
}

// ShellWait returns the shell_wait tool.
func ShellWait(m *runner.Manager) sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        ShellWaitName,
		Description: shellWaitDescription,
		Brief:       "Wait for a shell task and collect its output.",
		Effect:      sdk.EffectNone,
		ReadOnly:    true,
		InputSchema: schemaFor[shellWaitInput](func(s *jsonschema.Schema) {
			s.Properties["timeout_ms"].Minimum = minimum(1)
		}),
	}, func(ctx context.Context, in shellWaitInput) (*sdk.Result, error) {
		defer watchTask(ctx, m, in.TaskID)()
		return m.Wait(ctx, in.TaskID, millis(in.TimeoutMS))
	})
}
