package adapter

import (
	"context"
	"encoding/json"

	"github.com/yagent/yagent/sdk"
)

// Executor runs a validated, authorized call: in a plugin process
// (pluginmgr), or in the host for host-native tools.
//
// progress may be nil. A *sdk.ToolError return carries its code into the
// envelope; any other error becomes tool_failed.
type Executor interface {
	Execute(ctx context.Context, info sdk.CallInfo, input json.RawMessage, progress func(sdk.Progress)) (*sdk.Result, error)
}

// ExecutorFunc adapts a function to Executor.
type ExecutorFunc func(ctx context.Context, info sdk.CallInfo, input json.RawMessage, progress func(sdk.Progress)) (*sdk.Result, error)

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, info sdk.CallInfo, input json.RawMessage, progress func(sdk.Progress)) (*sdk.Result, error) {
	return f(ctx, info, input, progress)
}
