package adapter

import (
	"context"

	"github.com/google/uuid"
)

type callIDKey struct{}

// WithCallID returns ctx carrying the id Call gives the call it runs under
// ctx, in its CallInfo and on every bus event of the call: how a front
// that taps the bus picks out the progress of one request. Without one,
// Call makes a fresh id.
func WithCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callIDKey{}, id)
}

func callIDFrom(ctx context.Context) string {
	if id, ok := ctx.Value(callIDKey{}).(string); ok && id != "" {
		return id
	}
	return uuid.NewString()
}
