// Command testplugin is the plugin pluginmgr's tests launch as a real
// process: yagent-plugin-test.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/grpc/metadata"

	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/sandbox/cgroup"
)

// PanicText is what the panic tool panics with; the tests look for it.
const PanicText = "testplugin: deliberate panic 5e1f"

type echoIn struct {
	Text string `json:"text"`
}

type echoOut struct {
	Text     string            `json:"text"`
	PID      int               `json:"pid"`
	Settings map[string]string `json:"settings"`
	// Cwd is the process's working folder and Entries what it holds.
	Cwd     string `json:"cwd"`
	Entries int    `json:"entries"`
}

type slowIn struct {
	// ReadyFile is created once the call runs.
	ReadyFile string `json:"ready_file,omitempty"`
	MS        int    `json:"ms,omitempty"`
}

type spawnIn struct {
	PIDFile string `json:"pid_file"`
}

type cgroupsIn struct {
	// PIDFile gets three pids: a setsid sleep in a live-N cgroup, one in a
	// bg-N cgroup, one left in a released (kept-N) cgroup.
	PIDFile string `json:"pid_file"`
}

type progressIn struct {
	N int `json:"n"`
}

type tracedOut struct {
	Traceparent string `json:"traceparent"`
	Telemetry   string `json:"telemetry"`
}

type approveIn struct {
	Path string `json:"path"`
}

func main() {
	settings := sdk.Settings()
	sdk.Serve(sdk.Plugin{
		Name:    "test",
		Version: "0.0.1",
		OnShutdown: func(context.Context) error {
			if f := settings["shutdown_file"]; f != "" {
				return os.WriteFile(f, []byte("shut down"), 0o600)
			}
			return nil
		},
		Tools: []sdk.Tool{
			sdk.NewTool(sdk.Spec{Name: "test_echo", Description: "Echo the text.", Effect: sdk.EffectNone},
				func(ctx context.Context, in echoIn) (echoOut, error) {
					wd, _ := os.Getwd()
					ents, _ := os.ReadDir(".")
					return echoOut{Text: in.Text, PID: os.Getpid(), Settings: sdk.Settings(), Cwd: wd, Entries: len(ents)}, nil
				}),
			sdk.NewTool(sdk.Spec{Name: "test_slow", Description: "Block until cancelled or ms pass."},
				func(ctx context.Context, in slowIn) (string, error) {
					if in.ReadyFile != "" {
						if err := os.WriteFile(in.ReadyFile, []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
							return "", err
						}
					}
					d := time.Duration(in.MS) * time.Millisecond
					if in.MS == 0 {
						d = time.Hour
					}
					select {
					case <-ctx.Done():
						return "", ctx.Err()
					case <-time.After(d):
						return "slept", nil
					}
				}),
			sdk.NewTool(sdk.Spec{Name: "test_traced", Description: "Start a span with the trace API and say what the call's metadata and environment hold.", Effect: sdk.EffectNone},
				func(ctx context.Context, _ struct{}) (tracedOut, error) {
					_, span := otel.Tracer("testplugin").Start(ctx, "testplugin inner")
					span.SetAttributes(attribute.String("testplugin.note", "inside"))
					span.End()
					md, _ := metadata.FromIncomingContext(ctx)
					return tracedOut{Traceparent: strings.Join(md.Get("traceparent"), ","), Telemetry: os.Getenv(sdk.TelemetryEnv)}, nil
				}),
			sdk.NewTool(sdk.Spec{Name: "test_panic", Description: "Panic."},
				func(ctx context.Context, _ struct{}) (string, error) {
					panic(PanicText)
				}),
			sdk.NewTool(sdk.Spec{Name: "test_spawn", Description: "Start sleep in its own process group and wait.", Effect: sdk.EffectExec},
				func(ctx context.Context, in spawnIn) (string, error) {
					cmd := exec.Command("sleep", "1000")
					cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
					if err := cmd.Start(); err != nil {
						return "", err
					}
					pgid := cmd.Process.Pid
					host := sdk.HostFrom(ctx)
					if err := host.ReportProcessGroup(ctx, pgid, true); err != nil {
						_ = cmd.Process.Kill()
						return "", err
					}
					if err := os.WriteFile(in.PIDFile, []byte(strconv.Itoa(pgid)), 0o600); err != nil {
						return "", err
					}
					exited := make(chan error, 1)
					go func() { exited <- cmd.Wait() }()
					select {
					case <-ctx.Done():
						_ = syscall.Kill(-pgid, syscall.SIGKILL)
						<-exited
						_ = host.ReportProcessGroup(context.Background(), pgid, false)
						return "", ctx.Err()
					case err := <-exited:
						_ = host.ReportProcessGroup(context.Background(), pgid, false)
						return fmt.Sprintf("sleep ended: %v", err), nil
					}
				}),
			sdk.NewTool(sdk.Spec{Name: "test_cgroups", Description: "Start a setsid sleep in a live, a background and a released cgroup, and wait.", Effect: sdk.EffectExec},
				func(ctx context.Context, in cgroupsIn) (string, error) {
					var pids []string
					for _, kind := range []string{"live", "bg", "kept"} {
						g, err := cgroup.New(kind == "bg")
						if err != nil {
							return "", err
						}
						cmd := exec.Command("setsid", "sleep", "1000")
						cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: g.FD()}
						if err := cmd.Start(); err != nil {
							return "", err
						}
						go cmd.Wait()
						if kind == "kept" {
							g.Release()
						}
						pids = append(pids, strconv.Itoa(cmd.Process.Pid))
					}
					if err := os.WriteFile(in.PIDFile, []byte(strings.Join(pids, " ")), 0o600); err != nil {
						return "", err
					}
					<-ctx.Done()
					return "", ctx.Err()
				}),
			sdk.NewTool(sdk.Spec{Name: "test_progress", Description: "Report n progress events."},
				func(ctx context.Context, in progressIn) (string, error) {
					for i := 1; i <= in.N; i++ {
						sdk.ReportProgress(ctx, "step "+strconv.Itoa(i), float64(i), float64(in.N))
					}
					return "done", nil
				}),
			sdk.NewTool(sdk.Spec{Name: "test_approve", Description: "Ask the user to approve a path."},
				func(ctx context.Context, in approveIn) (string, error) {
					resp, err := sdk.HostFrom(ctx).RequestApproval(ctx, sdk.ApprovalRequest{Reason: "test", Paths: []string{in.Path}})
					if err != nil {
						return "", err
					}
					return fmt.Sprintf("approved=%v reason=%s", resp.Approved, resp.Reason), nil
				}),
		},
	})
}
