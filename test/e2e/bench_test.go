package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yagent/yagent/host/adapter"
	"github.com/yagent/yagent/host/pluginmgr"
	"github.com/yagent/yagent/host/session"
	"github.com/yagent/yagent/host/surface"
	"github.com/yagent/yagent/sdk"
)

// reportLatencies reports the median and p99 of d in microseconds.
func reportLatencies(b *testing.B, d []time.Duration, unit string, scale time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2])/float64(scale), "median-"+unit)
	b.ReportMetric(float64(d[(len(d)*99)/100])/float64(scale), "p99-"+unit)
}

// BenchmarkCallOverhead: a trivial tool called through the whole pipeline,
// once served by a plugin process over gRPC and once in the host's process.
func BenchmarkCallOverhead(b *testing.B) {
	ws := b.TempDir()
	mgr := pluginmgr.New(pluginmgr.Options{Dirs: []string{probeDir}, CacheDir: b.TempDir()})
	plugins, _, err := mgr.Load(context.Background())
	if err != nil || len(plugins) != 1 {
		b.Fatalf("load probe: %v %v", plugins, err)
	}
	defer mgr.Close(context.Background())
	probe := plugins[0]

	local := sdk.NewTool(sdk.Spec{Name: "probe_pid", Description: "Return the plugin's PID.", Effect: sdk.EffectNone},
		func(context.Context, struct{}) (map[string]int, error) {
			return map[string]int{"pid": os.Getpid()}, nil
		})

	cases := []struct {
		name string
		src  surface.Source
	}{
		{"plugin", surface.Source{Plugin: "probe", Family: "probe", Pinned: true, Specs: probe.Specs, Exec: probe}},
		{"in-process", surface.Source{Plugin: "probe", Family: "probe", Pinned: true, Specs: []sdk.Spec{local.Spec()}, Exec: adapter.ToolExecutor(local, nil)}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			surf, err := surface.New([]surface.Source{c.src}, surface.Options{Workspace: ws, Yolo: true})
			if err != nil {
				b.Fatal(err)
			}
			sess := session.New("bench")
			ctx := context.Background()
			in := json.RawMessage(`{}`)
			if r := surf.Call(ctx, sess, "probe_pid", in); r.IsError() { // warm up: start the process
				b.Fatalf("probe_pid: %s", r.Text)
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				r := surf.Call(ctx, sess, "probe_pid", in)
				lat = append(lat, time.Since(start))
				if r.IsError() {
					b.Fatalf("probe_pid: %s", r.Text)
				}
			}
			b.StopTimer()
			reportLatencies(b, lat, "µs", time.Microsecond)
		})
	}
}

// BenchmarkServeStartToList: `yagent serve` from process start to the answer
// of the first tools/list, with a cold spec cache (a new home each time:
// every plugin is launched and described) and a warm one (plugins start
// lazily, nothing is hashed).
func BenchmarkServeStartToList(b *testing.B) {
	run := func(b *testing.B, home string) time.Duration {
		ws := b.TempDir()
		cmd := exec.Command(yagent, "serve", "--workspace", ws, "--profile", "full",
			"--plugin-dir", pluginsDir)
		cmd.Env = append(os.Environ(), "HOME="+home)
		start := time.Now()
		mc := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cs, err := mc.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, nil)
		if err != nil {
			b.Fatalf("connect: %v", err)
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			b.Fatalf("list: %v", err)
		}
		d := time.Since(start)
		_ = cs.Close()
		return d
	}
	b.Run("cold", func(b *testing.B) {
		var lat []time.Duration
		for b.Loop() {
			lat = append(lat, run(b, b.TempDir()))
		}
		reportLatencies(b, lat, "ms", time.Millisecond)
	})
	b.Run("warm", func(b *testing.B) {
		home := b.TempDir()
		run(b, home)
		var lat []time.Duration
		b.ResetTimer()
		for b.Loop() {
			lat = append(lat, run(b, home))
		}
		reportLatencies(b, lat, "ms", time.Millisecond)
	})
}
