package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/yagent/yagent/sdk"
)

// Environment switches for CI: YAGENT_TEST_NO_RG=1 and
// YAGENT_TEST_NO_CTAGS=1 hide ripgrep and ctags from every test here, as
// if they were not installed.
const (
	noRgEnv    = "YAGENT_TEST_NO_RG"
	noCtagsEnv = "YAGENT_TEST_NO_CTAGS"
)

// lookPath is exec.LookPath with the programs named hidden, and those the
// environment switches hide.
func lookPath(hide ...string) func(string) (string, error) {
	hidden := map[string]bool{}
	for _, h := range hide {
		hidden[h] = true
	}
	if os.Getenv(noRgEnv) == "1" {
		hidden["rg"] = true
	}
	if os.Getenv(noCtagsEnv) == "1" {
		hidden["ctags"] = true
	}
	return func(file string) (string, error) {
		if hidden[filepath.Base(file)] {
			return "", exec.ErrNotFound
		}
		return exec.LookPath(file)
	}
}

// has reports whether a program is installed and not hidden.
func has(name string) bool {
	_, err := lookPath()(name)
	return err == nil
}

func call(t testing.TB, tool sdk.Tool, workspace string, input any) (*sdk.Result, error) {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	ctx := sdk.WithCall(context.Background(), sdk.CallInfo{ID: "c1", Tool: tool.Spec().Name, Workspace: workspace})
	return tool.Call(ctx, raw)
}

func mustCall(t testing.TB, tool sdk.Tool, workspace string, input any) *sdk.Result {
	t.Helper()
	res, err := call(t, tool, workspace, input)
	if err != nil {
		t.Fatalf("%s(%v): %v", tool.Spec().Name, input, err)
	}
	return res
}

// wantToolError asserts err is a *sdk.ToolError with code.
func wantToolError(t testing.TB, err error, code string) *sdk.ToolError {
	t.Helper()
	var te *sdk.ToolError
	if !errors.As(err, &te) || te.Code != code {
		t.Fatalf("error = %v, want a tool error with code %s", err, code)
	}
	return te
}

func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for rel, data := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func noteKinds(r *sdk.Result) map[string]string {
	m := map[string]string{}
	for _, n := range r.Notes {
		m[n.Kind] = n.Detail
	}
	return m
}
