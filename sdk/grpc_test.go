package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/plugintest"
)

type echoIn struct {
	Text string `json:"text"`
}

// testPlugin serves tools exercising every path of the protocol.
func testPlugin() sdk.Plugin {
	return sdk.Plugin{
		Name:    "wire",
		Version: "1.2.3",
		Tools: []sdk.Tool{
			sdk.NewTool(sdk.Spec{
				Name:        "echo",
				Description: "Echo the text back.",
				Brief:       "echo text",
				Effect:      sdk.EffectRead,
				ReadOnly:    true,
				Serial:      true,
				AlwaysAsk:   true,
				Roles:       map[string]sdk.Role{"text": sdk.RolePathRead},
			}, func(ctx context.Context, in echoIn) (*sdk.Result, error) {
				return &sdk.Result{
					Text:   in.Text,
					Data:   map[string]any{"text": in.Text, "call": sdk.CallFrom(ctx)},
					Images: []sdk.Image{{MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}, Path: "shot.png"}},
					Notes:  []sdk.Note{{Kind: "line_endings", Detail: "crlf-applied"}},
				}, nil
			}),
			sdk.NewTool(sdk.Spec{Name: "fail_typed"}, func(ctx context.Context, _ struct{}) (string, error) {
				return "", &sdk.ToolError{Code: sdk.CodeNotFound, Message: "no such file: a.txt", Data: map[string]int{"line": 3}}
			}),
			sdk.NewTool(sdk.Spec{Name: "fail_plain"}, func(ctx context.Context, _ struct{}) (string, error) {
				return "", errors.New("disk on fire")
			}),
			sdk.NewTool(sdk.Spec{Name: "unserializable"}, func(ctx context.Context, _ struct{}) (*sdk.Result, error) {
				return &sdk.Result{Text: "looks fine", Data: map[string]any{"ch": make(chan int)}}, nil
			}),
			sdk.NewTool(sdk.Spec{Name: "progress"}, func(ctx context.Context, _ struct{}) (string, error) {
				for i := 1; i <= 3; i++ {
					sdk.ReportProgress(ctx, "step", float64(i), 3)
				}
				return "done", nil
			}),
			sdk.NewTool(sdk.Spec{Name: "ask"}, func(ctx context.Context, in struct {
				Path string `json:"path"`
			}) (string, error) {
				resp, err := sdk.HostFrom(ctx).RequestApproval(ctx, sdk.ApprovalRequest{Reason: "read outside", Paths: []string{in.Path}})
				if err != nil {
					return "", err
				}
				if !resp.Approved {
					return "", sdk.Errorf(sdk.CodeDenied, "denied: %s", resp.Reason)
				}
				return "approved: " + resp.Reason, nil
			}),
			sdk.NewTool(sdk.Spec{Name: "groups"}, func(ctx context.Context, _ struct{}) (string, error) {
				h := sdk.HostFrom(ctx)
				for _, g := range []struct {
					pgid int
					live bool
				}{{4242, true}, {4343, true}, {4242, false}} {
					if err := h.ReportProcessGroup(ctx, g.pgid, g.live); err != nil {
						return "", err
					}
				}
				return "reported", nil
			}),
			sdk.NewTool(sdk.Spec{Name: "block"}, func(ctx context.Context, _ struct{}) (string, error) {
				<-ctx.Done()
				return "", ctx.Err()
			}),
			sdk.NewTool(sdk.Spec{Name: "deadline"}, func(ctx context.Context, _ struct{}) (string, error) {
				d, ok := ctx.Deadline()
				if !ok {
					return "no deadline", nil
				}
				return d.UTC().Format(time.RFC3339), nil
			}),
			sdk.NewTool(sdk.Spec{Name: "explode"}, func(ctx context.Context, _ struct{}) (string, error) {
				panic("kaboom 51d2")
			}),
		},
	}
}

func TestDescribe_RoundTripsSpecs(t *testing.T) {
	t.Parallel()
	p := testPlugin()
	c := plugintest.Start(t, p, nil)
	d, err := c.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "wire" || d.Version != "1.2.3" || d.ProtocolVersion != sdk.ProtocolVersion {
		t.Fatalf("Describe: got %s %s v%d, want wire 1.2.3 v%d", d.Name, d.Version, d.ProtocolVersion, sdk.ProtocolVersion)
	}
	if len(d.Specs) != len(p.Tools) {
		t.Fatalf("Describe: got %d specs, want %d", len(d.Specs), len(p.Tools))
	}
	for i := 1; i < len(d.Specs); i++ {
		if d.Specs[i-1].Name >= d.Specs[i].Name {
			t.Errorf("specs not sorted by name: %s before %s", d.Specs[i-1].Name, d.Specs[i].Name)
		}
	}
	want := p.Tools[0].Spec()
	var got sdk.Spec
	for _, s := range d.Specs {
		if s.Name == want.Name {
			got = s
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("echo spec over the wire:\n got %+v\nwant %+v", got, want)
	}
}

func TestCall_ResultRoundTrips(t *testing.T) {
	t.Parallel()
	eachPath(t, approveAsks, func(t *testing.T, c *plugintest.Client) {
		deadline := time.Now().Add(time.Hour).Truncate(time.Second)
		info := sdk.CallInfo{ID: "c-1", SessionID: "s-9", Workspace: "/ws", ApprovedPaths: []string{"/etc/hosts"}, Deadline: deadline}
		res, err := c.Call(context.Background(), "echo", info, echoIn{Text: "hello"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != "/ws/hello" {
			t.Errorf("Text: got %q, want /ws/hello", res.Text)
		}
		var data struct {
			Text string
			Call sdk.CallInfo
		}
		if err := json.Unmarshal(res.Data.(json.RawMessage), &data); err != nil {
			t.Fatalf("Data %s: %v", res.Data, err)
		}
		wantInfo := info
		wantInfo.Tool = "echo"
		if !data.Call.Deadline.Equal(deadline) {
			t.Errorf("deadline: got %v, want %v", data.Call.Deadline, deadline)
		}
		data.Call.Deadline = deadline
		// text is a path_read argument: the host's guard sends it resolved
		// against the workspace.
		if data.Text != "/ws/hello" || !reflect.DeepEqual(data.Call, wantInfo) {
			t.Errorf("Data: got %+v, want text /ws/hello and call %+v", data, wantInfo)
		}
		wantImg := []sdk.Image{{MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}, Path: "shot.png"}}
		if !reflect.DeepEqual(res.Images, wantImg) {
			t.Errorf("Images: got %+v, want %+v", res.Images, wantImg)
		}
		if want := []sdk.Note{{Kind: "line_endings", Detail: "crlf-applied"}}; !reflect.DeepEqual(res.Notes, want) {
			t.Errorf("Notes: got %+v, want %+v", res.Notes, want)
		}
	})
}

func TestCall_Errors(t *testing.T) {
	t.Parallel()
	eachPath(t, nil, func(t *testing.T, c *plugintest.Client) {
		tests := []struct {
			tool     string
			code     string
			contains []string
			data     string
		}{
			{tool: "fail_typed", code: sdk.CodeNotFound, contains: []string{"no such file: a.txt"}, data: `{"line":3}`},
			{tool: "fail_plain", code: sdk.CodeToolFailed, contains: []string{"disk on fire"}},
			{tool: "unserializable", code: sdk.CodeResultUnencoding, contains: []string{"unserializable", "cannot be serialized"}},
			{tool: "nope", code: sdk.CodeUnknownTool, contains: []string{`"nope"`, "echo", "fail_plain"}},
			{tool: "explode", code: sdk.CodePluginCrashed, contains: []string{"wire", "kaboom 51d2"}},
		}
		for _, tt := range tests {
			t.Run(tt.tool, func(t *testing.T) {
				t.Parallel()
				res, err := c.Call(context.Background(), tt.tool, sdk.CallInfo{}, struct{}{})
				te, ok := sdk.AsToolError(err)
				if !ok {
					t.Fatalf("Call(%s): got result %+v, error %v; want a *ToolError", tt.tool, res, err)
				}
				if te.Code != tt.code {
					t.Errorf("Call(%s): code %q, want %q (%s)", tt.tool, te.Code, tt.code, te.Message)
				}
				for _, s := range tt.contains {
					if !strings.Contains(te.Message, s) {
						t.Errorf("Call(%s): message %q does not contain %q", tt.tool, te.Message, s)
					}
				}
				if tt.data != "" {
					if b, _ := json.Marshal(te.Data); string(b) != tt.data {
						t.Errorf("Call(%s): data %s, want %s", tt.tool, b, tt.data)
					}
				}
			})
		}
	})
}

func TestCall_ProgressInOrder(t *testing.T) {
	t.Parallel()
	eachPath(t, nil, func(t *testing.T, c *plugintest.Client) {
		res, err := c.Call(context.Background(), "progress", sdk.CallInfo{ID: "p-1"}, nil)
		if err != nil || res.Text != "done" {
			t.Fatalf("Call(progress): %+v, %v", res, err)
		}
		want := []sdk.Progress{{Message: "step", Progress: 1, Total: 3}, {Message: "step", Progress: 2, Total: 3}, {Message: "step", Progress: 3, Total: 3}}
		if got := c.Host.Progress("p-1"); !reflect.DeepEqual(got, want) {
			t.Errorf("progress: got %+v, want %+v", got, want)
		}
	})
}

func TestCall_ApprovalOverBroker(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		approve bool
		code    string
		text    string
	}{
		{name: "approved", approve: true, text: "approved: ok by test"},
		{name: "denied", approve: false, code: sdk.CodeDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := plugintest.Start(t, testPlugin(), &plugintest.Options{
				Approve: func(ctx context.Context, call sdk.CallInfo, req sdk.ApprovalRequest) (sdk.ApprovalResponse, error) {
					return sdk.ApprovalResponse{Approved: tt.approve, Reason: "ok by test"}, nil
				},
			})
			res, err := c.Call(context.Background(), "ask", sdk.CallInfo{ID: "a-1", SessionID: "s-1"}, map[string]string{"path": "/outside"})
			if tt.code != "" {
				if te, ok := sdk.AsToolError(err); !ok || te.Code != tt.code {
					t.Fatalf("Call(ask): %+v, %v; want code %s", res, err, tt.code)
				}
			} else if err != nil || res.Text != tt.text {
				t.Fatalf("Call(ask): %+v, %v; want %q", res, err, tt.text)
			}
			got := c.Host.Approvals()
			if len(got) != 1 {
				t.Fatalf("approvals: got %d, want 1", len(got))
			}
			a := got[0]
			if a.Call.ID != "a-1" || a.Call.SessionID != "s-1" || a.Call.Tool != "ask" || a.Call.Workspace != c.Workspace {
				t.Errorf("approval call info: got %+v", a.Call)
			}
			if a.Request.Reason != "read outside" || !reflect.DeepEqual(a.Request.Paths, []string{"/outside"}) {
				t.Errorf("approval request: got %+v", a.Request)
			}
		})
	}
}

func TestCall_NoApproverDenies(t *testing.T) {
	t.Parallel()
	eachPath(t, nil, func(t *testing.T, c *plugintest.Client) {
		_, err := c.Call(context.Background(), "ask", sdk.CallInfo{}, map[string]string{"path": "/x"})
		if te, ok := sdk.AsToolError(err); !ok || te.Code != sdk.CodeDenied || !strings.Contains(te.Message, "no approver") {
			t.Fatalf("Call(ask) without approver: %v; want denied naming the missing approver", err)
		}
	})
}

func TestCall_ReportsProcessGroups(t *testing.T) {
	t.Parallel()
	eachPath(t, nil, func(t *testing.T, c *plugintest.Client) {
		if _, err := c.Call(context.Background(), "groups", sdk.CallInfo{ID: "g-1"}, nil); err != nil {
			t.Fatal(err)
		}
		if got, want := c.Host.LiveGroups(), []int{4343}; !reflect.DeepEqual(got, want) {
			t.Errorf("LiveGroups: got %v, want %v", got, want)
		}
		reports := c.Host.GroupReports()
		if len(reports) != 3 || reports[0] != (plugintest.GroupReport{CallID: "g-1", PGID: 4242, Live: true}) {
			t.Errorf("GroupReports: got %+v", reports)
		}
	})
}

func TestCall_CancelReachesTool(t *testing.T) {
	t.Parallel()
	eachPath(t, nil, func(t *testing.T, c *plugintest.Client) {
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := c.Call(ctx, "block", sdk.CallInfo{}, nil)
			errc <- err
		}()
		cancel()
		select {
		case err := <-errc:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Call(block) after cancel: %v, want context.Canceled", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Call(block) did not return after cancel")
		}
	})
}

func TestCall_DeadlineReachesTool(t *testing.T) {
	t.Parallel()
	eachPath(t, nil, func(t *testing.T, c *plugintest.Client) {
		tests := []struct {
			name     string
			deadline time.Time
			want     string
		}{
			{name: "none", want: "no deadline"},
			{name: "set", deadline: time.Date(2100, 1, 2, 3, 4, 5, 0, time.UTC), want: "2100-01-02T03:04:05Z"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				res, err := c.Call(context.Background(), "deadline", sdk.CallInfo{Deadline: tt.deadline}, nil)
				if err != nil || res.Text != tt.want {
					t.Fatalf("Call(deadline): %+v, %v; want %q", res, err, tt.want)
				}
			})
		}
	})
}

func TestCall_ContextDeadlineFillsCallInfo(t *testing.T) {
	t.Parallel()
	eachPath(t, approveAsks, func(t *testing.T, c *plugintest.Client) {
		deadline := time.Now().Add(time.Hour)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		res, err := c.Call(ctx, "echo", sdk.CallInfo{}, echoIn{Text: "x"})
		if err != nil {
			t.Fatal(err)
		}
		var data struct{ Call sdk.CallInfo }
		if err := json.Unmarshal(res.Data.(json.RawMessage), &data); err != nil {
			t.Fatal(err)
		}
		if !data.Call.Deadline.Equal(deadline) {
			t.Errorf("CallInfo.Deadline seen by the tool: %v, want ctx's deadline %v", data.Call.Deadline, deadline)
		}
	})
}

// eachPath runs test on a plugin started twice: once with calls on a call
// channel, as to a plugin process, once with calls as gRPC streams, as to a
// plugin built before the call channel.
func eachPath(t *testing.T, opts *plugintest.Options, test func(t *testing.T, c *plugintest.Client)) {
	for _, grpc := range []bool{false, true} {
		name := "channel"
		if grpc {
			name = "grpc"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o := plugintest.Options{}
			if opts != nil {
				o = *opts
			}
			o.GRPCCalls = grpc
			c := plugintest.Start(t, testPlugin(), &o)
			if c.CallChannel() == grpc {
				t.Fatalf("calls on the call channel: %v, want %v", c.CallChannel(), !grpc)
			}
			test(t, c)
		})
	}
}

// approveAsks approves what the host's guard asks about (echo asks before
// every call), as a user would.
var approveAsks = &plugintest.Options{Answer: func(plugintest.Decision) bool { return true }}
