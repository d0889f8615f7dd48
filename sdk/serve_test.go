package sdk

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"testing"
)

func TestPluginValidate(t *testing.T) {
	t.Parallel()
	ok := NewTool(Spec{Name: "ok"}, func(context.Context, struct{}) (string, error) { return "", nil })
	badEffect := NewTool(Spec{Name: "bad_effect", Effect: "teleport"}, func(context.Context, struct{}) (string, error) { return "", nil })
	badRole := NewTool(Spec{Name: "bad_role", Roles: map[string]Role{"p": "path"}}, func(context.Context, struct{}) (string, error) { return "", nil })
	badSchema := NewTool(Spec{Name: "bad_schema", InputSchema: json.RawMessage(`{"type":`)}, func(context.Context, struct{}) (string, error) { return "", nil })
	tests := []struct {
		name string
		p    Plugin
		want string // "" = valid
	}{
		{name: "valid", p: Plugin{Name: "x", Tools: []Tool{ok}}},
		{name: "no tools is valid", p: Plugin{Name: "x"}},
		{name: "no name", p: Plugin{Tools: []Tool{ok}}, want: "no name"},
		{name: "duplicate", p: Plugin{Name: "x", Tools: []Tool{ok, ok}}, want: `"ok" is declared twice`},
		{name: "nil tool", p: Plugin{Name: "x", Tools: []Tool{nil}}, want: "tool 0 is nil"},
		{name: "effect", p: Plugin{Name: "x", Tools: []Tool{badEffect}}, want: `effect "teleport"`},
		{name: "role", p: Plugin{Name: "x", Tools: []Tool{badRole}}, want: `unknown role "path"`},
		{name: "schema", p: Plugin{Name: "x", Tools: []Tool{badSchema}}, want: "not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.p.validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("validate: %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("validate: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestParseSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw     string
		want    map[string]string
		wantErr bool
	}{
		{raw: "", want: map[string]string{}},
		{raw: "null", want: map[string]string{}},
		{raw: `{"rg_path":"/opt/rg","depth":"3"}`, want: map[string]string{"rg_path": "/opt/rg", "depth": "3"}},
		{raw: `{"depth":3}`, want: map[string]string{}, wantErr: true},
		{raw: `not json`, want: map[string]string{}, wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseSettings(tt.raw)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseSettings(%q): error %v, want error %v", tt.raw, err, tt.wantErr)
		}
		if got == nil || len(got) != len(tt.want) {
			t.Errorf("parseSettings(%q): got %v, want %v", tt.raw, got, tt.want)
			continue
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("parseSettings(%q)[%s]: got %q, want %q", tt.raw, k, got[k], v)
			}
		}
	}
}

// TestCapProcs: Plugin.MaxProcs lowers GOMAXPROCS, never raises it, and
// yields to GOMAXPROCS in the environment.
func TestCapProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	t.Setenv("GOMAXPROCS", "")
	os.Unsetenv("GOMAXPROCS")
	capProcs(0)
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("MaxProcs 0: GOMAXPROCS %d, want 3 (left alone)", got)
	}
	capProcs(5)
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("MaxProcs 5: GOMAXPROCS %d, want 3 (never raised)", got)
	}
	capProcs(1)
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("MaxProcs 1: GOMAXPROCS %d, want 1", got)
	}
	runtime.GOMAXPROCS(3)
	t.Setenv("GOMAXPROCS", "3")
	capProcs(1)
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("MaxProcs 1 with GOMAXPROCS=3 in the environment: %d, want 3", got)
	}
}
