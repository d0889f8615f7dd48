package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk"
)

// everyFieldSet fails when a field of v is zero: a field added later
// without a conversion would otherwise round-trip as zero unnoticed.
func everyFieldSet(t *testing.T, v any) {
	t.Helper()
	rv := reflect.ValueOf(v)
	for i := range rv.NumField() {
		if rv.Field(i).IsZero() {
			t.Errorf("%s.%s is zero in the fixture; set it so the round trip covers it", rv.Type().Name(), rv.Type().Field(i).Name)
		}
	}
}

// loopback serves p in this process (the sdk's ServerPluginSet) and
// connects to it as the host does, over gRPC with go-plugin's broker; host
// answers the plugin's callbacks. Both directions of every conversion run:
// the host's here, the plugin's in the sdk.
func loopback(t *testing.T, p sdk.Plugin, host sdk.Host) *Client {
	t.Helper()
	serverSet, err := sdk.ServerPluginSet(p, sdk.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Loopback(t, serverSet, host)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Describe(t.Context()); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCallInfo_SandboxRoundTrips: the CallInfo the host sends is the one
// the tool finds in its context, every field of it, and no sandbox or temp
// folder stays none rather than turning into an empty one.
func TestCallInfo_SandboxRoundTrips(t *testing.T) {
	t.Parallel()
	seen := make(chan sdk.CallInfo, 1)
	r := loopback(t, sdk.Plugin{Name: "roundtrip", Tools: []sdk.Tool{
		sdk.NewTool(sdk.Spec{Name: "run_bash"}, func(ctx context.Context, _ struct{}) (string, error) {
			seen <- sdk.CallFrom(ctx)
			return "", nil
		}),
	}}, nil)
	roundTrip := func(in sdk.CallInfo) sdk.CallInfo {
		t.Helper()
		if _, err := r.Call(t.Context(), in, json.RawMessage(`{}`), nil); err != nil {
			t.Fatalf("Call: %v", err)
		}
		return <-seen
	}
	sb := sdk.Sandbox{
		Mode:    sdk.SandboxRequired,
		Network: sdk.NetworkProxy,
		Egress:  &sdk.Egress{NetNS: "/proc/1/fd/9", Proxy: "127.0.0.1:3128"},
		Read:    []string{"/srv/data", "/home/u/.cache"},
		Write:   []string{"/tmp/out"},
		Granted: []string{"/srv/out/file"},
		Programs: []sdk.ExecProgram{{Name: "printenv", Files: []sdk.ProgramFile{
			{Path: "/usr/bin/printenv", Size: 31, SHA256: "ab12"},
			{Path: "/bin/printenv", Size: 31, SHA256: "ab12"},
		}, Interactive: true}, {Name: "curl"}},
		Pids:        4096,
		MemoryMB:    8192,
		TmpSizeMB:   4096,
		UnixSockets: []string{"/run/docker.sock", "/tmp/ssh-x/agent.1"},
	}
	everyFieldSet(t, sb)
	// A deadline to the nanosecond, far enough off for the call to run.
	deadline := time.Unix(0, time.Now().Add(time.Hour).UnixNano())
	in := sdk.CallInfo{ID: "c1", Tool: "run_bash", SessionID: "s1", Workspace: "/ws", ApprovedPaths: []string{"/etc/x"},
		Deadline: deadline, Sandbox: &sb, Temp: &sdk.TempFolder{Dir: "/var/tmp/yagent-0/s.1.2.ab", Over: []string{"/tmp", "/dev/shm"}}}
	everyFieldSet(t, in)
	everyFieldSet(t, *in.Temp)
	if got := roundTrip(in); !reflect.DeepEqual(got, in) {
		t.Errorf("the tool's CallInfo:\n got %+v %+v\nwant %+v %+v", got, got.Sandbox, in, in.Sandbox)
	}
	in.ID, in.Sandbox, in.Temp = "c2", nil, nil
	if got := roundTrip(in); got.Sandbox != nil || got.Temp != nil {
		t.Errorf("a call without a sandbox or temp folder came back with %+v and %+v, want nil", got.Sandbox, got.Temp)
	}
	off := sdk.Sandbox{Mode: sdk.SandboxOff}
	in.ID, in.Sandbox = "c3", &off
	if got := roundTrip(in); got.Sandbox == nil || got.Sandbox.Mode != sdk.SandboxOff {
		t.Errorf("an off sandbox came back as %+v, want Mode off", got.Sandbox)
	}
}

// approvalHost hands each approval request it gets to reqs and approves it.
type approvalHost struct {
	sdk.Host // the sdk's own, which ignores reports
	reqs     chan sdk.ApprovalRequest
}

func (h approvalHost) RequestApproval(ctx context.Context, req sdk.ApprovalRequest) (sdk.ApprovalResponse, error) {
	h.reqs <- req
	return sdk.ApprovalResponse{Approved: true}, nil
}

// TestApprovalRequest_RoundTrips: the request a tool makes reaches the
// host whole, over the broker.
func TestApprovalRequest_RoundTrips(t *testing.T) {
	t.Parallel()
	in := sdk.ApprovalRequest{Reason: "r", Paths: []string{"/p"}, Command: "c", Kind: sdk.ApprovalExec, TaskID: "t1",
		Program: "/usr/bin/printenv", Shell: true, Input: "i", Dir: "/d", Unseen: true, Ahead: "a",
		Argv: []string{"printenv", "FOO"}, Interpreters: []string{"/usr/bin/env", "/usr/bin/python3"}, Terminal: true}
	everyFieldSet(t, in)
	host := approvalHost{Host: sdk.HostFrom(t.Context()), reqs: make(chan sdk.ApprovalRequest, 1)}
	r := loopback(t, sdk.Plugin{Name: "roundtrip", Tools: []sdk.Tool{
		sdk.NewTool(sdk.Spec{Name: "run_bash"}, func(ctx context.Context, _ struct{}) (string, error) {
			resp, err := sdk.HostFrom(ctx).RequestApproval(ctx, in)
			if err != nil || !resp.Approved {
				return "", fmt.Errorf("approval: %+v, %v", resp, err)
			}
			return "asked", nil
		}),
	}}, host)
	if _, err := r.Call(t.Context(), sdk.CallInfo{ID: "c1", SessionID: "s1", Tool: "run_bash"}, json.RawMessage(`{}`), nil); err != nil {
		t.Fatalf("Call: %v", err)
	}
	select {
	case got := <-host.reqs:
		if !reflect.DeepEqual(got, in) {
			t.Errorf("the host's request:\n got %+v\nwant %+v", got, in)
		}
	default:
		t.Fatal("the request never reached the host")
	}
}

// TestSandboxToWire_BooleanForThePreviousProtocol: the boolean a plugin of
// the first protocol reads keeps the network for on alone: under proxy
// such a plugin gives its commands loopback only, never the machine's
// network.
func TestSandboxToWire_BooleanForThePreviousProtocol(t *testing.T) {
	t.Parallel()
	for mode, want := range map[string]bool{"": true, sdk.NetworkOn: true, sdk.NetworkProxy: false, sdk.NetworkOff: false} {
		if got := sandboxToWire(&sdk.Sandbox{Network: mode}).GetNetwork(); got != want {
			t.Errorf("network %q: the boolean is %v, want %v", mode, got, want)
		}
	}
}
