package tools

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/yagent/yagent/plugins/shell/runner"
	"github.com/yagent/yagent/sdk"
)

// Version is the shell plugin's version.
const Version = "0.1.0"

// All returns the shell tools over m, sorted by name.
func All(m *runner.Manager) []sdk.Tool {
	return []sdk.Tool{
		RunBash(m),
		ShellCancel(m),
		ShellTasks(m),
		ShellWait(m),
		WriteStdin(m),
	}
}

// Options returns the Manager options of the plugin: the state folder from
// the plugin settings (state_dir) or DefaultStateDir, and the plugin
// handshake's variables kept out of commands' environment.
func Options(settings map[string]string) (runner.Options, error) {
	opts := runner.Options{
		StateDir: settings["state_dir"],
		DropEnv:  []string{sdk.Handshake.MagicCookieKey, sdk.SettingsEnv, sdk.LogLevelEnv},
	}
	if opts.StateDir == "" {
		dir, err := runner.DefaultStateDir()
		if err != nil {
			return opts, fmt.Errorf("shell: %w", err)
		}
		opts.StateDir = dir
	}
	return opts, nil
}

// schemaFor infers In's schema and lets edit refine it (enums, minimums)
// before it is frozen into the spec.
func schemaFor[In any](edit func(s *jsonschema.Schema)) json.RawMessage {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("shell tools: schema: %v", err))
	}
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	if edit != nil {
		edit(s)
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("shell tools: schema: %v", err))
	}
	return b
}

func minimum(v float64) *float64 { return &v }

func millis(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }
