package e2e

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yagent/yagent/internal/proctest"
)

// BenchmarkReadOverFront: read_file of a 4 KiB file through `yagent serve`
// over stdio and over Streamable HTTP on loopback, side by side in one run:
// sequential latency, then throughput with 8 calls in flight; last, the
// sequential latency over HTTP of a client that can elicit, as most do.
func BenchmarkReadOverFront(b *testing.B) {
	home, ws := b.TempDir(), b.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte(strings.Repeat("0123456789abcde\n", 256)), 0o644); err != nil {
		b.Fatal(err)
	}
	var environ []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "YAGENT_") {
			environ = append(environ, kv)
		}
	}
	environ = append(environ, "HOME="+home, "YAGENT_TOKEN="+e2eToken)
	args := []string{"serve", "--workspace", ws, "--plugin-dir", pluginsDir}
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	ctx := context.Background()

	stdioCmd := exec.Command(yagent, args...)
	stdioCmd.Env = environ
	stdio, err := client.Connect(ctx, &mcp.CommandTransport{Command: stdioCmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		b.Fatalf("connect over stdio: %v", err)
	}
	defer stdio.Close()

	httpCmd := exec.Command(yagent, append(args, "--http", "127.0.0.1:0")...)
	httpCmd.Env = environ
	stderr, _ := httpCmd.StderrPipe()
	if err := httpCmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = httpCmd.Process.Signal(os.Interrupt); _ = httpCmd.Wait() }()
	var url string
	select {
	case url = <-proctest.ServingURL(stderr):
	case <-time.After(60 * time.Second):
	}
	if url == "" {
		b.Fatal("no serving line from serve --http")
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			b.Fatal("serve --http not ready within 30s")
		}
	}
	connect := func(c *mcp.Client) *mcp.ClientSession {
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint:   url,
			HTTPClient: &http.Client{Transport: bearerTransport{token: e2eToken, base: &http.Transport{MaxIdleConnsPerHost: 16}}},
			MaxRetries: -1,
		}, nil)
		if err != nil {
			b.Fatalf("connect over HTTP: %v", err)
		}
		return cs
	}
	over := connect(client)
	defer over.Close()
	// The same server, a second session: a client that declares
	// elicitation (its handler never runs: nothing here asks).
	overAsking := connect(mcp.NewClient(&mcp.Implementation{Name: "bench-elicit", Version: "0"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	}))
	defer overAsking.Close()

	// read reports with b.Error: the in-flight workers are not the
	// benchmark's goroutine, where Fatal belongs.
	read := func(b *testing.B, cs *mcp.ClientSession) {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "f.txt"}})
		if err != nil || r.IsError {
			b.Errorf("read_file: %v %v", err, r)
		}
	}
	fronts := []struct {
		name string
		cs   *mcp.ClientSession
	}{{"stdio", stdio}, {"http", over}, {"http-eliciting", overAsking}}
	// Every front's sequential calls first, then the calls in flight: a
	// host serving HTTP keeps its cores for a moment after calls side by
	// side (procScaler in cmd/yagent), which a client's calls one after
	// another do not meet in use.
	for _, front := range fronts {
		for range 20 { // warm up: the fs plugin started, its caches filled
			read(b, front.cs)
		}
		b.Run(front.name+"/sequential", func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				read(b, front.cs)
				lat = append(lat, time.Since(start))
			}
			reportLatencies(b, lat, "µs", time.Microsecond)
		})
	}
	for _, front := range fronts[:2] {
		b.Run(front.name+"/8-in-flight", func(b *testing.B) {
			start := time.Now()
			work := make(chan struct{})
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range work {
						read(b, front.cs)
					}
				}()
			}
			for b.Loop() {
				work <- struct{}{}
			}
			close(work)
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
		})
	}
}
