package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/sandbox"
)

// count_lines runs wc inside the sandbox the host sent: a file in the
// workspace is counted; one outside every root it was given stays out of
// reach where the machine has Landlock.
func TestCountLines_Sandboxed(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("1\n2\n3\n"), 0o644)
	call := func(path string) (*sdk.Result, error) {
		ctx := sdk.WithCall(context.Background(), sdk.CallInfo{Workspace: ws, Sandbox: &sdk.Sandbox{Mode: sdk.SandboxOn}})
		in, _ := json.Marshal(linesInput{Path: path})
		return linesTool().Call(ctx, in)
	}
	res, err := call("a.txt")
	if err != nil || res.Data.(linesOutput).Lines != "3" {
		t.Fatalf("count_lines(a.txt) = %+v, %v; want 3 lines", res, err)
	}
	if sandbox.Probe().LandlockABI == 0 {
		t.Skip("no Landlock here: the sandbox cannot hold a file outside the workspace")
	}
	// Outside the workspace and the temp folders a call's children write
	// (/tmp and $TMPDIR are theirs when the call has no temp folder).
	outside, err := os.MkdirTemp("/var/tmp", "hello-outside-")
	if err != nil {
		t.Skipf("no folder outside /tmp to test with: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s\n"), 0o644)
	res, err = call(filepath.Join(outside, "secret"))
	if err == nil || !strings.Contains(err.Error(), "ermission denied") {
		t.Fatalf("count_lines of a file outside the sandbox = %+v, %v; want wc refused", res, err)
	}
}
