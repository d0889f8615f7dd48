package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/yagent/yagent/sdk"
)

// call runs tool directly, as the sdk server would, in session.
func call(t *testing.T, tool sdk.Tool, session, input string) (*sdk.Result, error) {
	t.Helper()
	ctx := sdk.WithCall(context.Background(), sdk.CallInfo{ID: "c", Tool: tool.Spec().Name, SessionID: session})
	return tool.Call(ctx, json.RawMessage(input))
}

// mustCall is call that fails the test on an error.
func mustCall(t *testing.T, tool sdk.Tool, session, input string) *sdk.Result {
	t.Helper()
	res, err := call(t, tool, session, input)
	if err != nil {
		t.Fatalf("%s(%s): %v", tool.Spec().Name, input, err)
	}
	return res
}

// toolErr asserts err is a *sdk.ToolError with code and returns it.
func toolErr(t *testing.T, err error, code string) *sdk.ToolError {
	t.Helper()
	te, ok := sdk.AsToolError(err)
	if !ok || te.Code != code {
		t.Fatalf("got error %v, want a %s tool error", err, code)
	}
	return te
}
