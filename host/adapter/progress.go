package adapter

import (
	"context"

	"github.com/yagent/yagent/sdk"
)

type progressKey struct{}

// WithProgress returns ctx carrying fn, which Call invokes with every
// progress event of the call (beside publishing it on the bus): how a front
// turns progress into, say, MCP progress notifications of one request.
func WithProgress(ctx context.Context, fn func(sdk.Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

func progressFrom(ctx context.Context) func(sdk.Progress) {
	fn, _ := ctx.Value(progressKey{}).(func(sdk.Progress))
	return fn
}
