package tools

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/plugintest"
)

// The plugin serves exactly the registry's cognitive tools and declares
// what the registry binds anyway.
func TestPlugin_SpecsMatchRegistry(t *testing.T) {
	t.Parallel()
	p := newPlugin(options{})
	var names []string
	for _, tool := range p.Tools {
		s := tool.Spec()
		names = append(names, s.Name)
		st, ok := toolspec.Lookup(s.Name)
		if !ok || st.Family != toolspec.FamilyCognitive {
			t.Errorf("%s is not a static cognitive tool", s.Name)
			continue
		}
		if s.Effect != st.Effect || s.ReadOnly != st.ReadOnly || s.Serial != st.Serial || s.AlwaysAsk != st.AlwaysAsk || s.Brief != st.Brief {
			t.Errorf("%s declares %+v, registry says %+v", s.Name, s, st)
		}
		if strings.TrimSpace(s.Description) == "" || !json.Valid(s.InputSchema) {
			t.Errorf("%s: no description or invalid schema", s.Name)
		}
	}
	var want []string
	for _, st := range toolspec.OfFamily(toolspec.FamilyCognitive) {
		want = append(want, st.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Fatalf("tools %q, want %q", names, want)
	}
}

func TestPlugin_SchemaListsStatuses(t *testing.T) {
	t.Parallel()
	var schema struct {
		Properties map[string]struct {
			Items struct {
				Properties map[string]struct {
					Enum []string `json:"enum"`
				} `json:"properties"`
			} `json:"items"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(updatePlanTool(newStore("")).Spec().InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	got := schema.Properties["plan"].Items.Properties["status"].Enum
	if want := []string{"pending", "in_progress", "completed"}; !slices.Equal(got, want) {
		t.Fatalf("update_plan plan[].status enum = %q, want %q", got, want)
	}
}

// Served over real gRPC, state still follows the session id of each call.
func TestPlugin_OverGRPC(t *testing.T) {
	t.Parallel()
	c := plugintest.Start(t, newPlugin(options{StateDir: t.TempDir()}), nil)
	ctx := context.Background()
	d, err := c.Describe(ctx)
	if err != nil || d.Name != pluginName || len(d.Specs) != 5 {
		t.Fatalf("Describe = %+v, %v", d, err)
	}
	todos := map[string]any{"todos": []map[string]string{{"id": "1", "content": "write tests", "status": "pending"}}}
	if _, err := c.Call(ctx, todoWriteName, sdk.CallInfo{SessionID: "a"}, todos); err != nil {
		t.Fatal(err)
	}
	for session, want := range map[string]string{"a": "write tests", "b": "The todo list is empty."} {
		res, err := c.Call(ctx, todoReadName, sdk.CallInfo{SessionID: session}, map[string]any{})
		if err != nil || !strings.Contains(res.Text, want) {
			t.Fatalf("todo_read in %s = %+v, %v; want %q", session, res, err, want)
		}
	}
}

func TestOptionsFrom(t *testing.T) {
	t.Parallel()
	sep := string(os.PathListSeparator)
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	tests := []struct {
		name     string
		settings map[string]string
		env      map[string]string
		want     options
	}{
		{"nothing", nil, nil, options{}},
		{"settings", map[string]string{"skill_dirs": "/a" + sep + " /b/ " + sep, "state_dir": "/s"}, map[string]string{"YAGENT_STATE_DIR": "/e"},
			options{StateDir: "/s", SkillDirs: []string{"/a", "/b"}}},
		{"env state dir", nil, map[string]string{"YAGENT_STATE_DIR": "/e"}, options{StateDir: "/e"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := optionsFrom(tt.settings, env(tt.env))
			if got.StateDir != tt.want.StateDir || !slices.Equal(got.SkillDirs, tt.want.SkillDirs) {
				t.Fatalf("optionsFrom = %+v, want %+v", got, tt.want)
			}
		})
	}
}
