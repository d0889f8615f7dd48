package tools

import (
	"context"
	_ "embed"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/yagent/yagent/plugins/shell/runner"
	"github.com/yagent/yagent/sdk"
)

// RunBashName is the name of the tool that runs a command.
const RunBashName = "run_bash"

//go:embed run_bash.md
var runBashDescription string

type runBashInput struct {
	Command      string `json:"command"`
	IsBackground bool   `json:"is_background,omitempty"`
	IsDangerous  bool   `json:"is_dangerous,omitempty"`
	TimeoutMS    int    `json:"timeout_ms,omitempty"`
	YieldTimeMS  int    `json:"yield_time_ms,omitempty"`
	Mode         string `json:"mode,omitempty"`
}

// RunBash returns the run_bash tool.
func RunBash(m *runner.Manager) sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        RunBashName,
		Description: runBashDescription,
		Brief:       "Run a bash command in the workspace.",
		Effect:      sdk.EffectExec,
		Roles:       map[string]sdk.Role{"command": sdk.RoleCommand, "is_dangerous": sdk.RoleDangerFlag},
		InputSchema: schemaFor[runBashInput](func(s *jsonschema.Schema) {
			s.Properties["mode"].Enum = []any{runner.ModeAuto, runner.ModePipe, runner.ModePTY}
			s.Properties["timeout_ms"].Minimum = minimum(1)
			s.Properties["yield_time_ms"].Minimum = minimum(1)
		}),
	}, func(ctx context.Context, in runBashInput) (*sdk.Result, error) {
		// is_dangerous is the host guard's business; by the time a call gets
		// here it has been authorized.
		return m.Run(ctx, runner.RunRequest{
			Command:    in.Command,
			Background: in.IsBackground,
			Timeout:    millis(in.TimeoutMS),
			Yield:      millis(in.YieldTimeMS),
			Mode:       in.Mode,
			Watch:      watchProgress(ctx, ""),
		})
	})
}
