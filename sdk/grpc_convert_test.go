package sdk

import (
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pluginpb "github.com/yagent/yagent/sdk/proto"
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

// wire marshals and unmarshals m, as the gRPC transport does.
func wire[M proto.Message](t *testing.T, m M, out M) M {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := proto.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCallInfo_SandboxRoundTrips(t *testing.T) {
	t.Parallel()
	sb := Sandbox{
		Mode:    SandboxRequired,
		Network: true,
		Read:    []string{"/srv/data", "/home/u/.cache"},
		Write:   []string{"/tmp/out"},
		Granted: []string{"/srv/out/file"},
		Programs: []ExecProgram{{Name: "printenv", Files: []ProgramFile{
			{Path: "/usr/bin/printenv", Size: 31, SHA256: "ab12"},
			{Path: "/bin/printenv", Size: 31, SHA256: "ab12"},
		}, Interactive: true}, {Name: "curl"}},
		Pids:        4096,
		MemoryMB:    8192,
		TmpSizeMB:   4096,
		UnixSockets: []string{"/run/docker.sock", "/tmp/ssh-x/agent.1"},
	}
	everyFieldSet(t, sb)
	in := CallInfo{ID: "c1", Tool: "run_bash", SessionID: "s1", Workspace: "/ws", ApprovedPaths: []string{"/etc/x"},
		Deadline: time.Unix(0, 1234567), Sandbox: &sb, Temp: &TempFolder{Dir: "/var/tmp/yagent-0/s.1.2.ab", Over: []string{"/tmp", "/dev/shm"}}}
	everyFieldSet(t, in)
	everyFieldSet(t, *in.Temp)
	got := callFromWire(wire(t, callToWire(in, nil, 7), &pluginpb.CallRequest{}))
	if !reflect.DeepEqual(got, in) {
		t.Errorf("callFromWire(callToWire(info)):\n got %+v\nwant %+v", got.Sandbox, in.Sandbox)
	}
	in.Sandbox, in.Temp = nil, nil
	if got := callFromWire(wire(t, callToWire(in, nil, 7), &pluginpb.CallRequest{})); got.Sandbox != nil || got.Temp != nil {
		t.Errorf("a call without a sandbox or temp folder came back with %+v and %+v, want nil", got.Sandbox, got.Temp)
	}
	off := Sandbox{Mode: SandboxOff}
	in.Sandbox = &off
	if got := callFromWire(wire(t, callToWire(in, nil, 7), &pluginpb.CallRequest{})); got.Sandbox == nil || got.Sandbox.Mode != SandboxOff {
		t.Errorf("an off sandbox came back as %+v, want Mode off", got.Sandbox)
	}
}

func TestApprovalRequest_RoundTrips(t *testing.T) {
	t.Parallel()
	in := ApprovalRequest{Reason: "r", Paths: []string{"/p"}, Command: "c", Kind: ApprovalExec, TaskID: "t1",
		Program: "/usr/bin/printenv", Shell: true, Input: "i", Dir: "/d", Unseen: true, Ahead: "a",
		Argv: []string{"printenv", "FOO"}, Interpreters: []string{"/usr/bin/env", "/usr/bin/python3"}, Terminal: true}
	everyFieldSet(t, in)
	info := CallInfo{ID: "c1", SessionID: "s1", Tool: "run_bash"}
	w := wire(t, approvalToWire(info, in), &pluginpb.ApprovalRequest{})
	if w.GetCallId() != "c1" || w.GetSessionId() != "s1" || w.GetTool() != "run_bash" {
		t.Errorf("approvalToWire: call %q session %q tool %q, want the call's", w.GetCallId(), w.GetSessionId(), w.GetTool())
	}
	if got := approvalFromWire(w); !reflect.DeepEqual(got, in) {
		t.Errorf("approvalFromWire(approvalToWire(req)):\n got %+v\nwant %+v", got, in)
	}
}
