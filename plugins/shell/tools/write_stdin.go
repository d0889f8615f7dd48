package tools

import (
	"context"
	_ "embed"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/yagent/yagent/plugins/shell/runner"
	"github.com/yagent/yagent/sdk"
)

// WriteStdinName is the name of the tool that types into a task.
const WriteStdinName = "write_stdin"

//go:embed write_stdin.md
var writeStdinDescription string

type writeStdinInput struct {
	TaskID string   `json:"task_id"`
	Input  string   `json:"input,omitempty"`
	Keys   []string `json:"keys,omitempty"`
}

// WriteStdin returns the write_stdin tool.
func WriteStdin(m *runner.Manager) sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        WriteStdinName,
		Description: writeStdinDescription,
		Brief:       "Send text or keys to a running shell task.",
		Effect:      sdk.EffectExec,
		InputSchema: schemaFor[writeStdinInput](func(s *jsonschema.Schema) {
			keys := make([]any, len(runner.KeyNames))
			for i, k := range runner.KeyNames {
				keys[i] = k
			}
			s.Properties["keys"].Items.Enum = keys
		}),
	}, func(ctx context.Context, in writeStdinInput) (*sdk.Result, error) {
		defer watchTask(ctx, m, in.TaskID)()
		return m.WriteStdin(ctx, in.TaskID, in.Input, in.Keys)
	})
}
