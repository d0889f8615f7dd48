package pluginmgr

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk"
)

func benchManager(b *testing.B, cache string) *Manager {
	m := New(Options{Dirs: []string{testPluginDir}, CacheDir: cache})
	m.now = agedClock // the test plugin was built a moment ago
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = m.Close(ctx)
	})
	return m
}

// BenchmarkExecute_Echo is one call's round trip to a running plugin
// process over gRPC with mTLS.
func BenchmarkExecute_Echo(b *testing.B) {
	m := benchManager(b, b.TempDir())
	if _, _, err := m.Load(context.Background()); err != nil {
		b.Fatal(err)
	}
	p := m.Plugin("test")
	input := json.RawMessage(`{"text":"hello"}`)
	info := sdk.CallInfo{Tool: "test_echo"}
	b.ResetTimer()
	for b.Loop() {
		if _, err := p.Execute(context.Background(), info, input, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad_Cold launches and describes the plugin (empty cache).
func BenchmarkLoad_Cold(b *testing.B) {
	for b.Loop() {
		m := New(Options{Dirs: []string{testPluginDir}, CacheDir: b.TempDir()})
		if _, _, err := m.Load(context.Background()); err != nil {
			b.Fatal(err)
		}
		_ = m.Close(context.Background())
	}
}

// BenchmarkLoad_Warm reads the plugin's specs from the cache: no hash, no
// process.
func BenchmarkLoad_Warm(b *testing.B) {
	cache := b.TempDir()
	if _, _, err := benchManager(b, cache).Load(context.Background()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		m := New(Options{Dirs: []string{testPluginDir}, CacheDir: cache})
		m.now = agedClock
		if _, _, err := m.Load(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
