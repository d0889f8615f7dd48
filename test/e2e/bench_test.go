package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/host/pluginmgr"
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

// inProcess runs t in the host's process, with no plugin in between.
func inProcess(t sdk.Tool) adapter.Executor {
	return adapter.ExecutorFunc(func(ctx context.Context, info sdk.CallInfo, input json.RawMessage, _ func(sdk.Progress)) (*sdk.Result, error) {
		return t.Call(sdk.WithCall(ctx, info), input)
	})
}

// BenchmarkCallOverhead: a trivial tool called through the whole pipeline,
// served by a plugin process with calls on its call channel (plugin), the
// same with calls as gRPC streams (plugin-grpc), and in the host's process.
// The host's side runs with one processor, as `yagent serve` on stdio does,
// and the probe plugin with one, as the fs plugin does; plugin-per-core is
// the call channel with a processor per core on either side, as `yagent
// serve --http` and the search plugin run.
func BenchmarkCallOverhead(b *testing.B) {
	ws := b.TempDir()
	load := func(grpc bool) *pluginmgr.Plugin {
		mgr := pluginmgr.New(pluginmgr.Options{Dirs: []string{probeDir}, CacheDir: b.TempDir(), GRPCCalls: grpc})
		plugins, _, err := mgr.Load(context.Background())
		if err != nil || len(plugins) != 1 {
			b.Fatalf("load probe: %v %v", plugins, err)
		}
		b.Cleanup(func() { _ = mgr.Close(context.Background()) })
		return plugins[0]
	}
	probe, probeGRPC, probePerCore := load(false), load(true), load(false)

	local := sdk.NewTool(sdk.Spec{Name: "probe_pid", Description: "Return the plugin's PID.", Effect: sdk.EffectNone},
		func(context.Context, struct{}) (map[string]int, error) {
			return map[string]int{"pid": os.Getpid()}, nil
		})

	cores := runtime.NumCPU()
	cases := []struct {
		name  string
		src   surface.Source
		procs int
	}{
		{"plugin", surface.Source{Plugin: "probe", Family: "probe", Pinned: true, Specs: probe.Specs, Exec: probe}, 1},
		{"plugin-grpc", surface.Source{Plugin: "probe", Family: "probe", Pinned: true, Specs: probeGRPC.Specs, Exec: probeGRPC}, 1},
		{"in-process", surface.Source{Plugin: "probe", Family: "probe", Pinned: true, Specs: []sdk.Spec{local.Spec()}, Exec: inProcess(local)}, 1},
		{"plugin-per-core", surface.Source{Plugin: "probe", Family: "probe", Pinned: true, Specs: probePerCore.Specs, Exec: probePerCore}, cores},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(c.procs))
			if c.procs > 1 {
				// The plugin starts on the first call, with the host's
				// environment.
				b.Setenv("GOMAXPROCS", strconv.Itoa(c.procs))
			}
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
			if p, ok := c.src.Exec.(*pluginmgr.Plugin); ok && p.CallChannel() != (c.name != "plugin-grpc") {
				b.Fatalf("%s: calls on the call channel: %v", c.name, p.CallChannel())
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

// peakRSSMiB reads the peak resident set (VmHWM) of pid in MiB.
func peakRSSMiB(b *testing.B, pid int) float64 {
	b.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatalf("read status of %d: %v", pid, err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	b.Fatalf("no VmHWM for %d", pid)
	return 0
}

// pluginSurface loads one first-party plugin from pluginsDir behind a surface.
func pluginSurface(b *testing.B, name, ws string) (*surface.Surface, *pluginmgr.Plugin) {
	b.Helper()
	mgr := pluginmgr.New(pluginmgr.Options{Dirs: []string{pluginsDir}, CacheDir: b.TempDir()})
	if _, _, err := mgr.Load(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = mgr.Close(context.Background()) })
	p := mgr.Plugin(name)
	if p == nil {
		b.Fatalf("no %s plugin in %s", name, pluginsDir)
	}
	surf, err := surface.New([]surface.Source{{Plugin: name, Family: name, Specs: p.Specs, Exec: p}}, surface.Options{Workspace: ws, Yolo: true})
	if err != nil {
		b.Fatal(err)
	}
	return surf, p
}

// BenchmarkReadFileNearEndOf1GiB: read_file of a 2000-line window near the
// end of a 1 GiB file, through the host and the fs plugin; reports the
// plugin's peak RSS.
func BenchmarkReadFileNearEndOf1GiB(b *testing.B) {
	ws := b.TempDir()
	f, err := os.Create(filepath.Join(ws, "big.log"))
	if err != nil {
		b.Fatal(err)
	}
	line := []byte(strings.Repeat("x", 99) + "\n") // 100 bytes a line
	block := bytes.Repeat(line, 1<<14)
	lines := 0
	for written := 0; written < 1<<30; written += len(block) {
		if _, err := f.Write(block); err != nil {
			b.Fatal(err)
		}
		lines += 1 << 14
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	surf, p := pluginSurface(b, "fs", ws)
	sess := session.New("bench")
	in := json.RawMessage(fmt.Sprintf(`{"path":"big.log","offset":%d,"limit":2000}`, lines-2100))
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		r := surf.Call(context.Background(), sess, "read_file", in)
		lat = append(lat, time.Since(start))
		if r.IsError() {
			b.Fatalf("read_file: %s", r.Text)
		}
	}
	reportLatencies(b, lat, "ms", time.Millisecond)
	b.ReportMetric(peakRSSMiB(b, p.PID()), "plugin-peak-rss-MiB")
}

// BenchmarkRunBashHugeOutput: `yes | head -c 2G` through the host and the
// shell plugin; the output is capped, the plugin's peak RSS reported.
func BenchmarkRunBashHugeOutput(b *testing.B) {
	ws := b.TempDir()
	surf, p := pluginSurface(b, "shell", ws)
	sess := session.New("bench")
	in := json.RawMessage(`{"command":"yes | head -c 2G","yield_time_ms":600000}`)
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		r := surf.Call(context.Background(), sess, "run_bash", in)
		lat = append(lat, time.Since(start))
		if r.IsError() || !r.Truncated && !strings.Contains(r.Text, "left out") {
			b.Fatalf("run_bash: code %q, %d bytes of text", r.Code, len(r.Text))
		}
	}
	reportLatencies(b, lat, "ms", time.Millisecond)
	b.ReportMetric(peakRSSMiB(b, p.PID()), "plugin-peak-rss-MiB")
}
