package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/yagent/yagent/internal/wire"
	pluginpb "github.com/yagent/yagent/sdk/proto"
)

// CallChannel is the host's side of a plugin's call channel: a socket pair
// whose other end the plugin inherits when it starts. Calls travel on it
// as Frames instead of as the Call RPC's HTTP/2 stream, in two writes and
// two wake-ups a call. The pair has no name in the file system, so nothing
// but the two processes can reach it: the plugin closes its end to every
// command it runs, and the host closes its copy of that end once the
// plugin has started. Describe, approvals, process groups, session ends
// and shutdown stay on the mutual-TLS gRPC connection (ChannelTLS).
//
// The host makes one per launch: NewCallChannel, Attach to the plugin's
// command, Started once the process runs, then Client.UseCallChannel
// before Describe. A plugin that does not serve it (built against an older
// sdk) says so in Describe, and its calls go over gRPC as before.
type CallChannel struct {
	host, child *os.File
}

// NewCallChannel makes the socket pair of one plugin launch. It fails
// where the system has no socket pairs; the host then calls over gRPC.
func NewCallChannel() (*CallChannel, error) {
	h, c, err := wire.SocketPair()
	if err != nil {
		return nil, err
	}
	return &CallChannel{host: h, child: c}, nil
}

// Attach hands the plugin's end to cmd: as an inherited descriptor, named
// in wire.CallChannelEnv.
func (c *CallChannel) Attach(cmd *exec.Cmd) {
	wire.AttachInherited(cmd, wire.CallChannelEnv, c.child)
}

// Started closes the host's copy of the plugin's end, once the plugin's
// process holds its own: from then on the channel ends when the plugin
// does.
func (c *CallChannel) Started() {
	if c.child != nil {
		_ = c.child.Close()
		c.child = nil
	}
}

// Close closes both ends the host still holds (a launch that failed, or a
// plugin that does not serve the channel).
func (c *CallChannel) Close() {
	c.Started()
	if c.host != nil {
		_ = c.host.Close()
		c.host = nil
	}
}

// conn turns the host's end into a connection, leaving c holding nothing.
func (c *CallChannel) conn() (net.Conn, error) {
	c.Started()
	return takeConn(&c.host, "the call channel is already in use")
}

// PluginConn turns the plugin's end into a connection, for a plugin served
// in the host's process (sdk.ServeOptions.CallConn), as sdk/plugintest
// serves one.
func (c *CallChannel) PluginConn() (net.Conn, error) {
	return takeConn(&c.child, "the plugin's end of the call channel is already in use")
}

// takeConn turns *end into a connection and leaves *end nil.
func takeConn(end **os.File, taken string) (net.Conn, error) {
	f := *end
	*end = nil
	if f == nil {
		return nil, errors.New(taken)
	}
	defer f.Close()
	return net.FileConn(f)
}

// channelClient runs the host's calls on a call channel.
//
// While one call alone is in flight in a host with one processor (yagent
// serve on stdio, or over HTTP while its requests come one at a time), the
// reader waits for its answer by reading again rather than in the poller
// (quietio.Spinner), at most 150 µs: the answer then finds the host's
// thread running, and the host is not woken for it. With more than one
// processor the goroutine the answer readies would run on another thread,
// which is woken all the same; with more than one call in flight the
// processor is wanted by the others.
type channelClient struct {
	fc  *wire.FrameConn
	seq atomic.Uint64

	inFlight atomic.Int32 // the calls in c.calls
	spin     atomic.Bool  // the reader spins while inFlight is 1
	kick     func()       // wakes the reader to spin; nil: no spinning here

	mu    sync.Mutex
	calls map[uint64]*channelCall
	// err is why the channel ended; set before dead is closed.
	err  error
	dead chan struct{}
}

// channelCall is the queue of one call's events: the reader never waits
// on a slow caller, so one call's progress cannot hold up another's result.
type channelCall struct {
	id     uint64
	mu     sync.Mutex
	events []*pluginpb.CallEvent
	ready  chan struct{} // a token when events is not empty
}

func newChannelClient(conn net.Conn) *channelClient {
	c := &channelClient{fc: wire.NewFrameConn(conn), calls: make(map[uint64]*channelCall), dead: make(chan struct{})}
	if s, ok := c.fc.Spinner(); ok && s.SpinWhile(c.spinning) == nil {
		c.kick = s.Kick
	}
	go c.readLoop()
	return c
}

func (c *channelClient) readLoop() {
	var err error
	for {
		var f *pluginpb.Frame
		if f, err = c.fc.Read(); err != nil {
			break
		}
		ev := f.GetEvent()
		if ev == nil {
			err = fmt.Errorf("the plugin sent a frame that is not a call event (%T)", f.GetBody())
			break
		}
		c.mu.Lock()
		call := c.calls[f.GetId()]
		c.mu.Unlock()
		if call != nil { // else: a call that was cancelled or has its result
			call.push(ev)
		}
	}
	if errors.Is(err, io.EOF) {
		err = errors.New("the plugin closed it")
	}
	c.mu.Lock()
	c.err = status.Errorf(codes.Unavailable, "call channel: %v", err)
	c.mu.Unlock()
	close(c.dead)
	_ = c.fc.Close()
}

func (q *channelCall) push(ev *pluginpb.CallEvent) {
	q.mu.Lock()
	q.events = append(q.events, ev)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *channelCall) pop() *pluginpb.CallEvent {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.events) == 0 {
		return nil
	}
	ev := q.events[0]
	q.events[0] = nil
	q.events = q.events[1:]
	if len(q.events) > 0 {
		select {
		case q.ready <- struct{}{}:
		default:
		}
	}
	return ev
}

// start sends req as a new call; next yields its events, and end ends it.
func (c *channelClient) start(req *pluginpb.CallRequest, trace map[string]string) (*channelCall, error) {
	id := c.seq.Add(1)
	q := &channelCall{id: id, ready: make(chan struct{}, 1)}
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.calls[id] = q
	n := c.inFlight.Add(1)
	c.mu.Unlock()
	alone := n == 1 && c.kick != nil && runtime.GOMAXPROCS(0) == 1
	c.spin.Store(alone)
	err := c.fc.Write(&pluginpb.Frame{Id: id, Body: &pluginpb.Frame_Call{Call: req}, Trace: trace})
	if err == nil && alone {
		c.kick()
	}
	if err != nil {
		c.forget(id)
		if errors.Is(err, wire.ErrFrameTooBig) {
			return nil, status.Error(codes.ResourceExhausted, err.Error())
		}
		return nil, status.Errorf(codes.Unavailable, "call channel: %v", err)
	}
	return q, nil
}

// next returns the call's next event; the channel's error when it ended
// first, ctx's when ctx did. After the last event (not a progress event)
// the call is over and end sends nothing.
func (c *channelClient) next(ctx context.Context, q *channelCall) (*pluginpb.CallEvent, error) {
	for {
		if ev := q.pop(); ev != nil {
			if ev.GetProgress() == nil {
				c.forget(q.id)
			}
			return ev, nil
		}
		select {
		case <-q.ready:
		case <-c.dead:
			if ev := q.pop(); ev != nil {
				if ev.GetProgress() == nil {
					c.forget(q.id)
				}
				return ev, nil
			}
			return nil, c.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// end ends q for the host: when its last event has not come, the plugin
// is told to cancel it.
func (c *channelClient) end(q *channelCall) {
	if c.forget(q.id) {
		_ = c.fc.Write(&pluginpb.Frame{Id: q.id, Body: &pluginpb.Frame_Cancel{Cancel: &pluginpb.Cancel{}}})
	}
}

// forget drops the call id; false when it was already gone.
func (c *channelClient) forget(id uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.calls[id]
	if ok {
		delete(c.calls, id)
		c.inFlight.Add(-1)
	}
	return ok
}

// spinning says whether the reader spins: one call alone is in flight,
// in a host with one processor.
func (c *channelClient) spinning() bool { return c.spin.Load() && c.inFlight.Load() == 1 }

func (c *channelClient) close() { _ = c.fc.Close() }
