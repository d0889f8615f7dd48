package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/yagent/yagent/plugins/fs/tools"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/plugintest"
)

// TestPlugin_OverGRPC serves the tools as the plugin binary does and calls
// them over real gRPC: specs, results with notes, error codes, and file
// text with stray bytes (protobuf strings must be valid UTF-8).
func TestPlugin_OverGRPC(t *testing.T) {
	t.Parallel()
	c := plugintest.Start(t, sdk.Plugin{Name: "fs", Version: "test", Tools: tools.New().Tools()}, nil)
	ctx := context.Background()
	d, err := c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range d.Specs {
		names = append(names, s.Name)
	}
	if want := []string{"list_dir", "multi_edit", "read_file", "search_replace_in_file", "write_file"}; !slices.Equal(names, want) {
		t.Errorf("specs: got %v, want %v", names, want)
	}

	ws := c.Workspace
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte("a\r\nb \xff\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	info := sdk.CallInfo{SessionID: "s1"}
	res, err := c.Call(ctx, "read_file", info, map[string]any{"path": "f.txt"})
	if err != nil {
		t.Fatalf("read_file: %v", err)
	}
	if res.Text != "a\r\nb \uFFFD\r\n" {
		t.Errorf("read_file: got %q", res.Text)
	}

	if err := os.WriteFile(filepath.Join(ws, "g.txt"), []byte("x\r\ny\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = c.Call(ctx, "search_replace_in_file", info, map[string]any{"path": "g.txt", "old_string": "x\ny\n", "new_string": "z\n"})
	if err != nil {
		t.Fatalf("edit: %v", err)
	}
	if !slices.Contains(res.Notes, sdk.Note{Kind: "line_endings", Detail: "crlf-normalized"}) {
		t.Errorf("notes: got %v, want line_endings crlf-normalized", res.Notes)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "g.txt")); string(b) != "z\r\n" {
		t.Errorf("file: %q", b)
	}
	_, err = c.Call(ctx, "search_replace_in_file", info, map[string]any{"path": "g.txt", "old_string": "nope", "new_string": "x"})
	if te, ok := sdk.AsToolError(err); !ok || te.Code != sdk.CodeSearchNotFound {
		t.Errorf("missing text: got %v, want search_not_found", err)
	}
}
