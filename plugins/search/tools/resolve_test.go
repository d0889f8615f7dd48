package tools

import (
	"context"
	"testing"

	"github.com/yagent/yagent/sdk"
)

// TestResolve_UsesPathAsSent: a path argument is used as the host sent it:
// spaces are part of the name, "~" is not expanded again, and a relative
// path is taken from the workspace, never the plugin's working folder.
func TestResolve_UsesPathAsSent(t *testing.T) {
	t.Parallel()
	ctx := sdk.WithCall(context.Background(), sdk.CallInfo{Workspace: "/ws"})
	for in, want := range map[string]string{
		"":            "/ws",
		"/ws/ /etc":   "/ws/ /etc",
		" /etc":       "/ws/ /etc",
		"/ws/link  ":  "/ws/link  ",
		"\t/etc":      "/ws/\t/etc",
		"~/x":         "/ws/~/x",
		"/abs/../abs": "/abs",
	} {
		if got, err := resolve(ctx, in); err != nil || got != want {
			t.Errorf("resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
