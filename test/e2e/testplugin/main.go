package main

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/yagent/yagent/sdk"
)

func main() {
	sdk.Serve(sdk.Plugin{Name: "probe", Version: "0.0.1", Tools: []sdk.Tool{
		sdk.NewTool(sdk.Spec{Name: "probe_pid", Description: "Return the plugin's PID.", Effect: sdk.EffectNone},
			func(context.Context, struct{}) (map[string]int, error) {
				return map[string]int{"pid": os.Getpid()}, nil
			}),
		sdk.NewTool(sdk.Spec{Name: "probe_block", Description: "Block until the call is cancelled.", Effect: sdk.EffectNone},
			func(ctx context.Context, _ struct{}) (string, error) {
				sdk.ReportProgress(ctx, "blocking", 0, 0)
				<-ctx.Done()
				return "cancelled", nil
			}),
		sdk.NewTool(sdk.Spec{Name: "probe_steps", Description: "Report n steps of progress, then return.", Effect: sdk.EffectNone},
			func(ctx context.Context, in struct {
				N int `json:"n"`
			}) (string, error) {
				for i := 1; i <= in.N; i++ {
					sdk.ReportProgress(ctx, "step "+strconv.Itoa(i), float64(i), float64(in.N))
				}
				return "stepped " + strconv.Itoa(in.N), nil
			}),
		sdk.NewTool(sdk.Spec{Name: "probe_warn", Description: "Log a warning with text, naming the call's session when asked, through hclog or log/slog.", Effect: sdk.EffectNone},
			func(ctx context.Context, in struct {
				Text        string `json:"text"`
				NameSession bool   `json:"name_session,omitempty"`
				Slog        bool   `json:"slog,omitempty"`
			}) (string, error) {
				args := []any{"text", in.Text}
				if in.NameSession {
					args = append(args, "session", sdk.CallFrom(ctx).SessionID)
				}
				if in.Slog {
					slog.Warn("probe warning", args...)
				} else {
					hclog.L().Warn("probe warning", args...)
				}
				return "logged", nil
			}),
		sdk.NewTool(sdk.Spec{Name: "probe_stdin", Description: "Try to read the plugin's stdin.", Effect: sdk.EffectNone},
			func(context.Context, struct{}) (string, error) {
				got := make(chan string, 1)
				go func() {
					n, err := os.Stdin.Read(make([]byte, 64))
					if err != nil {
						got <- "error: " + err.Error()
						return
					}
					got <- "read " + strconv.Itoa(n) + " bytes"
				}()
				select {
				case s := <-got:
					return s, nil
				case <-time.After(2 * time.Second):
					return "blocked", nil
				}
			}),
		rendezvous("probe_meet", false),
		rendezvous("probe_meet_serial", true),
	},
		// As the fs family runs: BenchmarkCallOverhead's plugin hop is
		// measured with one processor on either side, as `yagent serve`
		// on stdio and the fs plugin run (its plugin-per-core case with
		// GOMAXPROCS set to the cores).
		MaxProcs: 1,
	})
}

type meetIn struct {
	Want     int `json:"want" jsonschema:"how many calls must be in flight together"`
	WindowMS int `json:"window_ms" jsonschema:"how long to wait for them"`
}

var meter = struct {
	sync.Mutex
	inflight map[string]int
	meetings map[string]int
	cond     *sync.Cond
}{inflight: map[string]int{}, meetings: map[string]int{}}

func init() { meter.cond = sync.NewCond(&meter.Mutex) }

// rendezvous returns a tool that reports whether want calls of it were in
// flight at the same time within the window.
func rendezvous(name string, serial bool) sdk.Tool {
	return sdk.NewTool(sdk.Spec{Name: name, Description: "Wait for other calls of this tool to be in flight.", Effect: sdk.EffectNone, Serial: serial},
		func(ctx context.Context, in meetIn) (map[string]bool, error) {
			deadline := time.Now().Add(time.Duration(in.WindowMS) * time.Millisecond)
			timer := time.AfterFunc(time.Until(deadline), func() {
				meter.Lock()
				meter.cond.Broadcast()
				meter.Unlock()
			})
			defer timer.Stop()
			meter.Lock()
			defer meter.Unlock()
			start := meter.meetings[name]
			meter.inflight[name]++
			if meter.inflight[name] >= in.Want {
				meter.meetings[name]++
				meter.cond.Broadcast()
			}
			met := false
			for {
				if meter.meetings[name] > start {
					met = true
					break
				}
				if time.Now().After(deadline) || ctx.Err() != nil {
					break
				}
				meter.cond.Wait()
			}
			meter.inflight[name]--
			return map[string]bool{"met": met}, nil
		})
}
