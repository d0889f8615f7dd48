package sandbox

import (
	"context"
	"slices"
	"testing"

	"github.com/yagent/yagent/sdk"
)

// TestForCall_CarriesTheBounds: the policy of a call holds what its
// sandbox says of the bounds, the temp folder's size and the sockets.
func TestForCall_CarriesTheBounds(t *testing.T) {
	t.Parallel()
	ctx := sdk.WithCall(context.Background(), sdk.CallInfo{Workspace: "/ws", Sandbox: &sdk.Sandbox{Mode: sdk.SandboxOn,
		Pids: 64, MemoryMB: 512, TmpSizeMB: 128, UnixSockets: []string{"/run/a.sock"}}})
	p, mode, ok := ForCall(ctx, []string{"A=1"})
	if !ok || mode != sdk.SandboxOn {
		t.Fatalf("ForCall: mode %q, ok %v", mode, ok)
	}
	if p.Pids != 64 || p.MemoryMB != 512 || p.TmpSizeMB != 128 || !slices.Equal(p.UnixSockets, []string{"/run/a.sock"}) {
		t.Errorf("policy %+v, want pids 64, memory 512 MiB, temp 128 MiB and the socket", p)
	}
}
