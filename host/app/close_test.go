package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/yagent/yagent/sdk/sandbox"
)

// TestClose_WaitsForTheStartsBackgroundWork: Close does not return while
// the start's background work (the program hashing, which saves its cache
// under the user's folder) goes on; a done ctx ends the wait and says so.
func TestClose_WaitsForTheStartsBackgroundWork(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	for _, d := range []string{ws, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a, err := Open(context.Background(), Options{Workspace: ws, Home: home, PluginDirs: []string{},
		ProbeSandbox: func() (sandbox.Layers, string, error) { return sandbox.Layers{LandlockABI: 7}, "", nil }})
	if err != nil {
		t.Fatal(err)
	}
	<-a.Warm()
	working := make(chan struct{})
	a.warm = working // the background work has not ended
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close with the background work going on and ctx done = %v; want it to wait, then say ctx ended", err)
	}
	close(working)
	if err := a.Close(context.Background()); err != nil {
		t.Fatalf("Close after the background work = %v", err)
	}
}
