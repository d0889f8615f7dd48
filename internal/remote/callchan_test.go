package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/yagent/yagent/internal/wire"
	"github.com/yagent/yagent/sdk"
	pluginpb "github.com/yagent/yagent/sdk/proto"
)

// channelEnds returns a Client calling on a new call channel, and the
// plugin's end of it (no gRPC: Describe is not needed to take it up).
func channelEnds(t *testing.T) (*Client, net.Conn) {
	t.Helper()
	ch, err := NewCallChannel()
	if err != nil {
		t.Skipf("no call channel here: %v", err)
	}
	t.Cleanup(ch.Close)
	pconn, err := ch.PluginConn()
	if err != nil {
		t.Fatal(err)
	}
	hconn, err := ch.conn()
	if err != nil {
		t.Fatal(err)
	}
	r := newClient(t.Context(), nil, nil, nil, sdk.ProtocolVersion)
	r.ch = newChannelClient(hconn)
	t.Cleanup(r.Close)
	return r, pconn
}

// channelPair serves p on the plugin's end of a new call channel, in this
// process (sdk.ServeOptions.CallConn), and returns the Client calling on
// the other, and what ends the plugin's end as a plugin's exit would (the
// sdk owns the conn it was given).
func channelPair(t *testing.T, p sdk.Plugin) (_ *Client, end func()) {
	t.Helper()
	r, pconn := channelEnds(t)
	f, err := pconn.(*net.UnixConn).File() // the same socket, to end it by
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := sdk.ServerPluginSet(p, sdk.ServeOptions{CallConn: pconn}); err != nil {
		t.Fatal(err)
	}
	return r, func() { shutdown(t, f) }
}

// TestCallChannel_CancelReachesTheTool: a call the host gives up on is
// cancelled in the plugin too, not left running there.
func TestCallChannel_CancelReachesTheTool(t *testing.T) {
	t.Parallel()
	started, stopped := make(chan struct{}), make(chan error, 1)
	r, _ := channelPair(t, sdk.Plugin{Name: "chan", Tools: []sdk.Tool{
		sdk.NewTool(sdk.Spec{Name: "block"}, func(ctx context.Context, _ struct{}) (string, error) {
			close(started)
			<-ctx.Done()
			stopped <- ctx.Err()
			return "", ctx.Err()
		}),
	}})
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := r.Call(ctx, sdk.CallInfo{Tool: "block"}, []byte(`{}`), nil)
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
	r, end := channelPair(t, sdk.Plugin{Name: "chan", Tools: []sdk.Tool{
		sdk.NewTool(sdk.Spec{Name: "block"}, func(ctx context.Context, _ struct{}) (string, error) {
			close(started)
			<-ctx.Done()
			return "", ctx.Err()
		}),
	}})
	errc := make(chan error, 1)
	go func() {
		_, err := r.Call(t.Context(), sdk.CallInfo{Tool: "block"}, []byte(`{}`), nil)
		errc <- err
	}()
	<-started
	end()
	select {
	case err := <-errc:
		if status.Code(errors.Unwrap(err)) != codes.Unavailable {
			t.Errorf("Call when the plugin's end closed: %v, want Unavailable", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Call did not return when the plugin's end closed")
	}
	if _, err := r.Call(t.Context(), sdk.CallInfo{Tool: "block"}, []byte(`{}`), nil); status.Code(errors.Unwrap(err)) != codes.Unavailable {
		t.Errorf("Call after the channel ended: %v, want Unavailable", err)
	}
}

// TestCallChannel_SlowProgressHoldsUpNoOtherCall: one call whose progress
// the host is slow to take does not hold up another call's result.
func TestCallChannel_SlowProgressHoldsUpNoOtherCall(t *testing.T) {
	t.Parallel()
	r, _ := channelPair(t, sdk.Plugin{Name: "chan", Tools: []sdk.Tool{
		sdk.NewTool(sdk.Spec{Name: "chatty"}, func(ctx context.Context, _ struct{}) (string, error) {
			for i := range 50 {
				sdk.ReportProgress(ctx, "step", float64(i), 50)
			}
			return "chatty done", nil
		}),
		sdk.NewTool(sdk.Spec{Name: "quick"}, func(ctx context.Context, _ struct{}) (string, error) {
			return "quick done", nil
		}),
	}})
	release, first := make(chan struct{}), make(chan struct{})
	slow := make(chan error, 1)
	go func() {
		seen := 0
		_, err := r.Call(t.Context(), sdk.CallInfo{Tool: "chatty"}, []byte(`{}`), func(sdk.Progress) {
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
	res, err := r.Call(ctx, sdk.CallInfo{Tool: "quick"}, []byte(`{}`), nil)
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
	plugin := wire.NewFrameConn(pconn)
	t.Cleanup(func() { _ = plugin.Close() })

	var frames []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for calls := 0; calls < 3; {
			f, err := plugin.Read()
			if err != nil {
				return
			}
			frames = append(frames, fmt.Sprintf("%T", f.GetBody()))
			if f.GetCall() != nil {
				calls++
				ev := &pluginpb.CallEvent{Event: &pluginpb.CallEvent_Result{Result: &pluginpb.CallResult{Text: "ok"}}}
				if err := plugin.Write(&pluginpb.Frame{Id: f.GetId(), Body: &pluginpb.Frame_Event{Event: ev}}); err != nil {
					return
				}
			}
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for range 3 {
		if res, err := r.Call(ctx, sdk.CallInfo{Tool: "quick"}, []byte(`{}`), nil); err != nil || res.Text != "ok" {
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
	r := newClient(t.Context(), nil, nil, nil, sdk.ProtocolVersion)
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

// TestCallChannel_SpinsForOneCallAloneOnOneProcessor: the reader waits for
// an answer by spinning only while one call alone is in flight in a host
// with one processor; with two calls in flight, with a processor per core,
// and once the answer is in, it waits in the poller.
func TestCallChannel_SpinsForOneCallAloneOnOneProcessor(t *testing.T) {
	r, pconn := channelEnds(t)
	if r.ch.kick == nil {
		t.Skip("the call channel's reads cannot spin here")
	}
	plugin := wire.NewFrameConn(pconn)
	t.Cleanup(func() { _ = plugin.Close() })
	// The plugin answers a call once told to, saying whether the host's
	// reader was spinning when the call came.
	type arrived struct {
		id       uint64
		spinning bool
	}
	calls := make(chan arrived)
	answer := make(chan uint64)
	go func() {
		for {
			f, err := plugin.Read()
			if err != nil {
				return
			}
			calls <- arrived{f.GetId(), r.ch.spinning()}
		}
	}()
	go func() {
		for id := range answer {
			ev := &pluginpb.CallEvent{Event: &pluginpb.CallEvent_Result{Result: &pluginpb.CallResult{Text: "ok"}}}
			if plugin.Write(&pluginpb.Frame{Id: id, Body: &pluginpb.Frame_Event{Event: ev}}) != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { close(answer) })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	call := func(done chan<- error) {
		res, err := r.Call(ctx, sdk.CallInfo{Tool: "quick"}, []byte(`{}`), nil)
		if err == nil && res.Text != "ok" {
			err = fmt.Errorf("result %q", res.Text)
		}
		done <- err
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, procs := range []int{1, 2, 1} {
		runtime.GOMAXPROCS(procs)
		done := make(chan error, 2)
		go call(done)
		first := <-calls
		if want := procs == 1; first.spinning != want {
			t.Errorf("with %d processors, one call alone in flight: spinning %v, want %v", procs, first.spinning, want)
		}
		go call(done)
		second := <-calls
		if second.spinning {
			t.Errorf("with %d processors, two calls in flight: spinning", procs)
		}
		answer <- first.id
		answer <- second.id
		for range 2 {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		if r.ch.spinning() {
			t.Errorf("with %d processors, no call in flight: spinning", procs)
		}
	}
	// One call alone, answered: the reader spun for it, and stops.
	runtime.GOMAXPROCS(1)
	done := make(chan error, 1)
	go call(done)
	alone := <-calls
	answer <- alone.id
	if err := <-done; err != nil || !alone.spinning {
		t.Fatalf("one call alone: %v, spinning %v", err, alone.spinning)
	}
	if r.ch.spinning() {
		t.Error("spinning once the answer of the one call in flight is in")
	}
}
