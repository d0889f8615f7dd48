package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkServeRunBash_BackgroundHoldsPipes: `sleep 97 & echo started`
// through `yagent serve` over stdio, call to answer. bash exits at once and
// the sleep holds the output pipe; each answer must say so (the held-open
// receipt), and the sleep, in bash's process group, is killed after it.
func BenchmarkServeRunBash_BackgroundHoldsPipes(b *testing.B) {
	cmd := exec.Command(yagent, "serve", "--workspace", b.TempDir(), "--plugin-dir", pluginsDir)
	cmd.Env = append(os.Environ(), "HOME="+b.TempDir())
	mc := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cs, err := mc.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, nil)
	if err != nil {
		b.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	args := map[string]any{"command": "sleep 97 & echo started"}
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_bash", Arguments: args})
		lat = append(lat, time.Since(start))
		if err != nil || r.IsError {
			b.Fatalf("run_bash: %v %+v", err, r)
		}
		var sc struct {
			Data struct {
				PID      int  `json:"pid"`
				HeldOpen bool `json:"output_held_open"`
			} `json:"data"`
		}
		raw, _ := json.Marshal(r.StructuredContent)
		if err := json.Unmarshal(raw, &sc); err != nil || sc.Data.PID == 0 {
			b.Fatalf("structured content %s: %v", raw, err)
		}
		_ = syscall.Kill(-sc.Data.PID, syscall.SIGKILL)
		if !sc.Data.HeldOpen {
			b.Fatalf("data %s: want output_held_open", raw)
		}
	}
	reportLatencies(b, lat, "ms", time.Millisecond)
}
