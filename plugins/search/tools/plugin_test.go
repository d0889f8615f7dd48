package tools

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/plugintest"
)

// The plugin serves exactly the registry's search tools and declares what
// the registry binds anyway.
func TestTools_SpecsMatchRegistry(t *testing.T) {
	t.Parallel()
	var names []string
	for _, tool := range All(Config{}) {
		s := tool.Spec()
		names = append(names, s.Name)
		st, ok := toolspec.Lookup(s.Name)
		if !ok || st.Family != toolspec.FamilySearch {
			t.Errorf("%s is not a static search tool", s.Name)
			continue
		}
		if s.Effect != st.Effect || s.ReadOnly != st.ReadOnly || s.Serial != st.Serial || s.AlwaysAsk != st.AlwaysAsk || s.Brief != st.Brief {
			t.Errorf("%s declares %+v, registry says %+v", s.Name, s, st)
		}
		for param, role := range st.Roles {
			if s.Roles[param] != role || !strings.Contains(string(s.InputSchema), `"`+param+`"`) {
				t.Errorf("%s: parameter %q with role %s missing (roles %v)", s.Name, param, role, s.Roles)
			}
		}
		if strings.TrimSpace(s.Description) == "" || !json.Valid(s.InputSchema) {
			t.Errorf("%s: no description or invalid schema", s.Name)
		}
	}
	var want []string
	for _, st := range toolspec.OfFamily(toolspec.FamilySearch) {
		want = append(want, st.Name)
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("tools = %q, want %q (sorted)", names, want)
	}
}

// The plugin answers over real gRPC the way the host calls it.
func TestPlugin_GrepOverGRPC(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.go": "package a\n\nfunc Hello() {}\n"})
	c := plugintest.Start(t, sdk.Plugin{Name: "search", Version: Version, Tools: All(Config{LookPath: lookPath()})}, &plugintest.Options{Workspace: ws})
	res, err := c.Call(context.Background(), "grep", sdk.CallInfo{Workspace: ws}, map[string]any{"pattern": `func \w+`})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "a.go:3:func Hello() {}\n" {
		t.Errorf("grep over gRPC = %q", res.Text)
	}
}
