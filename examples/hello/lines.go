package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"

	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/sandbox"
)

type linesInput struct {
	Path string `json:"path" jsonschema:"The file to count the lines of, relative to the workspace or absolute."`
}

type linesOutput struct {
	Lines string `json:"lines"`
}

// linesTool counts a file's lines with wc, a child process. It declares
// Effect read and the path's role, so the host's guard judges the path
// before the call; the child then runs inside the call's sandbox
// (sandbox.StartForCall applies the sdk.Sandbox the host sent), so what
// the guard could not see (a link swapped in, a path wc reads on its own)
// is held by the kernel.
func linesTool() sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        "count_lines",
		Description: "Count the lines of a file with wc -l. Returns the count.",
		Brief:       "Count a file's lines.",
		Effect:      sdk.EffectRead,
		Roles:       map[string]sdk.Role{"path": sdk.RolePathRead},
		ReadOnly:    true,
	}, func(ctx context.Context, in linesInput) (*sdk.Result, error) {
		if in.Path == "" {
			return nil, sdk.Errorf(sdk.CodeInvalidInput, "path is empty; name the file to count")
		}
		var out, errOut bytes.Buffer
		cmd := exec.CommandContext(ctx, "wc", "-l", "--", in.Path)
		cmd.Dir = sdk.CallFrom(ctx).Workspace
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := sandbox.StartForCall(ctx, cmd); err != nil {
			return nil, err
		}
		if err := cmd.Wait(); err != nil {
			return nil, sdk.Errorf(sdk.CodeDenied, "wc could not count %s: %s", in.Path, strings.TrimSpace(errOut.String()))
		}
		n, _, _ := strings.Cut(strings.TrimSpace(out.String()), " ")
		return &sdk.Result{Text: fmt.Sprintf("%s has %s lines.", in.Path, n), Data: linesOutput{Lines: n}}, nil
	})
}
