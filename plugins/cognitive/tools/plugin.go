package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/yagent/yagent/sdk"
)

const (
	pluginName    = "cognitive"
	pluginVersion = "0.1.0"
)

// Setting keys and the environment variable read by optionsFrom.
const (
	settingSkillDirs = "skill_dirs"
	settingStateDir  = "state_dir"
	envStateDir      = "YAGENT_STATE_DIR"
)

// options configure the plugin.
type options struct {
	// StateDir is where session state is persisted; "" keeps it in memory.
	StateDir string
	// SkillDirs are the folders searched for skills, in order.
	SkillDirs []string
}

// optionsFrom reads the plugin's settings, with the environment as the
// fallback for the state folder.
func optionsFrom(settings map[string]string, lookupEnv func(string) (string, bool)) options {
	var o options
	for d := range strings.SplitSeq(settings[settingSkillDirs], string(os.PathListSeparator)) {
		if d = strings.TrimSpace(d); d != "" {
			o.SkillDirs = append(o.SkillDirs, filepath.Clean(d))
		}
	}
	o.StateDir = strings.TrimSpace(settings[settingStateDir])
	if o.StateDir == "" && lookupEnv != nil {
		if d, ok := lookupEnv(envStateDir); ok {
			o.StateDir = strings.TrimSpace(d)
		}
	}
	return o
}

// newPlugin returns the cognitive plugin; its tools share one state store.
func newPlugin(o options) sdk.Plugin {
	st := newStore(o.StateDir)
	return sdk.Plugin{
		Name:    pluginName,
		Version: pluginVersion,
		Tools: []sdk.Tool{
			thinkTool(),
			updatePlanTool(st),
			todoWriteTool(st),
			todoReadTool(st),
			useSkillTool(o.SkillDirs),
		},
		OnSessionEnd: func(_ context.Context, id string) error { return st.end(id) },
	}
}

// Step and todo statuses.
const (
	statusPending    = "pending"
	statusInProgress = "in_progress"
	statusCompleted  = "completed"
)

var statuses = []any{statusPending, statusInProgress, statusCompleted}

// schemaWithEnums infers T's schema and restricts the string properties at
// the given paths ("plan.status": property status of the items of plan) to
// the given values, so the model sees the allowed words in the schema.
func schemaWithEnums[T any](enums map[string][]any) json.RawMessage {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic("cognitive: schema: " + err.Error())
	}
	for path, values := range enums {
		node := s
		for part := range strings.SplitSeq(path, ".") {
			if node.Items != nil {
				node = node.Items
			}
			node = node.Properties[part]
			if node == nil {
				panic("cognitive: schema: no property at " + path)
			}
		}
		node.Enum = values
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic("cognitive: schema: " + err.Error())
	}
	return b
}
