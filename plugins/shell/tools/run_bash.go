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
	Command      string `json:"command" jsonschema:"The bash command line to run, in the workspace root."`
	IsBackground bool   `json:"is_background,omitempty" jsonschema:"Start it detached, for servers and other long-lived processes: it keeps running after this call, its output goes to a log read with shell_wait."`
	IsDangerous  bool   `json:"is_dangerous,omitempty" jsonschema:"Set it when the command deletes, overwrites or publishes something hard to undo, or acts outside the workspace: the user is asked first."`
	TimeoutMS    int    `json:"timeout_ms,omitempty" jsonschema:"Kill the command and everything it started after this many milliseconds, also after it yielded to a task. Default 600000 (10 minutes)."`
	YieldTimeMS  int    `json:"yield_time_ms,omitempty" jsonschema:"Wait this many milliseconds before handing a still-running command back as a task. Default 15000; 2000 for known servers and watchers."`
	Mode         string `json:"mode,omitempty" jsonschema:"auto (default): a terminal for commands that need one (sudo, ssh, editors, pagers, bare REPLs), pipes otherwise; pipe: stdin is empty; pty: a terminal, to answer prompts with write_stdin."`
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
