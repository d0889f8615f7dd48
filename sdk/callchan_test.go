package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pluginpb "github.com/yagent/yagent/sdk/proto"
)

// channelEnds returns a Remote calling on a new call channel, and the
// plugin's end of it (no gRPC: Describe is not needed to take it up).
func channelEnds(t *testing.T) (*Remote, net.Conn) {
	t.Helper()
	ch, err := NewCallChannel()
	if err != nil {
		t.Skipf("no call channel here: %v", err)
	}
	t.Cleanup(ch.Close)
	pconn, err := ch.pluginConn()
	if err != nil {
		t.Fatal(err)
	}
	hconn, err := ch.conn()
	if err != nil {
		t.Fatal(err)
	}
	r := newRemote(t.Context(), nil, nil, nil)
	r.ch = newChannelClient(hconn)
	t.Cleanup(r.Close)
	return r, pconn
}

// channelPair serves p on the plugin's end of a new call channel, in this
// process, and returns the Remote calling on the other.
func channelPair(t *testing.T, p Plugin) (*Remote, *pluginServer, net.Conn) {
	t.Helper()
	srv, err := newPluginServer(p, ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, pconn := channelEnds(t)
	srv.serveOn(pconn)
	return r, srv, pconn
}

// TestCallChannel_CancelReachesTheTool: a call the host gives up on is
// cancelled in the plugin too, not left running there.
func TestCallChannel_CancelReachesTheTool(t *testing.T) {
	t.Parallel()
	started, stopped := make(chan struct{}), make(chan error, 1)
	r, _, _ := channelPair(t, Plugin{Name: "chan", Tools: []Tool{
		NewTool(Spec{Name: "block"}, func(ctx context.Context, _ struct{}) (string, error) {
			close(started)
			<-ctx.Done()
			stopped <- ctx.Err()
			return "", ctx.Err()
		}),
	}})
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := r.Call(ctx, CallInfo{Tool: "block"}, []byte(`{}`), nil)
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Call after cancel: %v, want context.Canceled", err)
	}
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the tool's context ended with %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the tool's context was not cancelled after the host gave up the call")
	}
}

// TestCallChannel_PluginGoneIsUnavailable: when the plugin's end closes
// mid-call the call fails as the gRPC path fails on a dead plugin, with
// Unavailable, which is what tells the host's manager it crashed; and so
// does every call after it.
func TestCallChannel_PluginGoneIsUnavailable(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	r, _, pconn := channelPair(t, Plugin{Name: "chan", Tools: []Tool{
		NewTool(Spec{Name: "block"}, func(ctx context.Context, _ struct{}) (string, error) {
			close(started)
			<-ctx.Done()
			return "", ctx.Err()
		}),
	}})
	errc := make(chan error, 1)
	go func() {
		_, err := r.Call(t.Context(), CallInfo{Tool: "block"}, []byte(`{}`), nil)
		errc <- err
	}()
	<-started
	_ = pconn.Close()
	select {
	case err := <-errc:
		if status.Code(errors.Unwrap(err)) != codes.Unavailable {
			t.Errorf("Call when the plugin's end closed: %v, want Unavailable", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Call did not return when the plugin's end closed")
	}
	if _, err := r.Call(t.Context(), CallInfo{Tool: "block"}, []byte(`{}`), nil); status.Code(errors.Unwrap(err)) != codes.Unavailable {
		t.Errorf("Call after the channel ended: %v, want Unavailable", err)
	}
}

// TestCallChannel_SlowProgressHoldsUpNoOtherCall: one call whose progress
// the host is slow to take does not hold up another call's result.
func TestCallChannel_SlowProgressHoldsUpNoOtherCall(t *testing.T) {
	t.Parallel()
	r, _, _ := channelPair(t, Plugin{Name: "chan", Tools: []Tool{
		NewTool(Spec{Name: "chatty"}, func(ctx context.Context, _ struct{}) (string, error) {
			for i := range 50 {
				ReportProgress(ctx, "step", float64(i), 50)
			}
			return "chatty done", nil
		}),
		NewTool(Spec{Name: "quick"}, func(ctx context.Context, _ struct{}) (string, error) {
			return "quick done", nil
		}),
	}})
	release, first := make(chan struct{}), make(chan struct{})
	slow := make(chan error, 1)
	go func() {
		seen := 0
		_, err := r.Call(t.Context(), CallInfo{Tool: "chatty"}, []byte(`{}`), func(Progress) {
			if seen++; seen == 1 {
				close(first)
				<-release
			}
		})
		slow <- err
	}()
	<-first
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := r.Call(ctx, CallInfo{Tool: "quick"}, []byte(`{}`), nil)
	close(release)
	if err != nil || res.Text != "quick done" {
		t.Errorf("quick call while another's progress waits: %+v, %v", res, err)
	}
	if err := <-slow; err != nil {
		t.Errorf("the chatty call: %v", err)
	}
}

// TestCallChannel_EndAfterResultSendsNoCancel: a call that got its result
// is over, so the host sends no cancel for it: the frame after a result is
// the next call. The test plays the plugin's end.
func TestCallChannel_EndAfterResultSendsNoCancel(t *testing.T) {
	t.Parallel()
	r, pconn := channelEnds(t)
	plugin := newFrameConn(pconn)
	t.Cleanup(func() { _ = plugin.close() })

	var frames []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for calls := 0; calls < 3; {
			f, err := plugin.read()
			if err != nil {
				return
			}
			frames = append(frames, fmt.Sprintf("%T", f.GetBody()))
			if f.GetCall() != nil {
				calls++
				ev := &pluginpb.CallEvent{Event: &pluginpb.CallEvent_Result{Result: &pluginpb.CallResult{Text: "ok"}}}
				if err := plugin.write(&pluginpb.Frame{Id: f.GetId(), Body: &pluginpb.Frame_Event{Event: ev}}); err != nil {
					return
				}
			}
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for range 3 {
		if res, err := r.Call(ctx, CallInfo{Tool: "quick"}, []byte(`{}`), nil); err != nil || res.Text != "ok" {
			t.Fatalf("Call: %+v, %v", res, err)
		}
	}
	<-done
	call := fmt.Sprintf("%T", (*pluginpb.Frame_Call)(nil))
	if want := []string{call, call, call}; !slices.Equal(frames, want) {
		t.Errorf("frames the plugin got for three calls: %v, want %v", frames, want)
	}
}

// TestCallChannel_NotServedIsClosed: a plugin that does not serve the
// channel it was offered (built against an older sdk) gets its calls over
// gRPC, and the host's end is closed rather than left open.
func TestCallChannel_NotServedIsClosed(t *testing.T) {
	t.Parallel()
	ch, err := NewCallChannel()
	if err != nil {
		t.Skipf("no call channel here: %v", err)
	}
	child := ch.child
	r := newRemote(t.Context(), nil, nil, nil)
	r.UseCallChannel(ch)
	r.takeUp(false)
	if r.CallChannel() {
		t.Fatal("calls go on a channel the plugin does not serve")
	}
	if ch.host != nil || ch.child != nil {
		t.Error("the host still holds an end of a channel nobody serves")
	}
	if _, err := child.Stat(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("the plugin's end in the host: %v, want closed", err)
	}
}

// TestTakeCallChannel_NothingInheritsIt: the plugin's end, and the
// variable naming it, reach no command the plugin starts.
func TestTakeCallChannel_NothingInheritsIt(t *testing.T) {
	if os.Getenv("YAGENT_TEST_TAKE_CHANNEL") == "1" {
		conn, err := takeCallChannel()
		if err != nil || conn == nil {
			t.Fatalf("takeCallChannel: %v, %v", conn, err)
		}
		out, err := exec.Command("sh", "-c", `ls -l /proc/self/fd/ | grep -c socket: ; echo "env:${`+CallChannelEnv+`-unset}"`).CombinedOutput()
		if err != nil {
			t.Fatalf("sh: %v: %s", err, out)
		}
		os.Stdout.Write(out)
		return
	}
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc")
	}
	ch, err := NewCallChannel()
	if err != nil {
		t.Skipf("no call channel here: %v", err)
	}
	defer ch.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTakeCallChannel_NothingInheritsIt$")
	cmd.Env = append(os.Environ(), "YAGENT_TEST_TAKE_CHANNEL=1")
	ch.Attach(cmd)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v: %s", err, out)
	}
	if got := string(out); !strings.HasPrefix(got, "0\nenv:unset\n") {
		t.Errorf("a command the plugin starts sees (sockets, then the variable):\n%s", got)
	}
}

// TestFrameConn_FramesOfEverySize: frames that fit the reader's buffer and
// frames larger than it arrive whole and in order, back to back, each
// decoded on its own (a frame's text is not the next frame's bytes), and a
// frame cut short is an error, not a frame.
func TestFrameConn_FramesOfEverySize(t *testing.T) {
	t.Parallel()
	a, b := net.Pipe()
	w, r := newFrameConn(a), newFrameConn(b)
	t.Cleanup(func() { _ = w.close(); _ = r.close() })
	texts := []string{"small", strings.Repeat("x", 60<<10), strings.Repeat("y", 200<<10), "after", strings.Repeat("z", 64<<10)}
	go func() {
		for i, text := range texts {
			ev := &pluginpb.CallEvent{Event: &pluginpb.CallEvent_Result{Result: &pluginpb.CallResult{Text: text}}}
			if err := w.write(&pluginpb.Frame{Id: uint64(i), Body: &pluginpb.Frame_Event{Event: ev}}); err != nil {
				return
			}
		}
		// A header promising more than follows, then the end.
		_, _ = a.Write([]byte{0, 0, 1, 0, 1, 2, 3})
		_ = a.Close()
	}()
	var got []*pluginpb.Frame
	for range texts {
		f, err := r.read()
		if err != nil {
			t.Fatalf("frame %d: %v", len(got), err)
		}
		got = append(got, f)
	}
	for i, f := range got {
		if f.GetId() != uint64(i) || f.GetEvent().GetResult().GetText() != texts[i] {
			t.Errorf("frame %d: id %d, text of %d bytes; want id %d, %d bytes", i, f.GetId(), len(f.GetEvent().GetResult().GetText()), i, len(texts[i]))
		}
	}
	if f, err := r.read(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a frame cut short: %v, %v; want io.ErrUnexpectedEOF", f, err)
	}
}
