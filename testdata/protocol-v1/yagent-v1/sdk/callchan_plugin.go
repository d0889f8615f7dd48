package sdk

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"

	"google.golang.org/grpc/metadata"

	"github.com/yagent/yagent/internal/wire"
	pluginpb "github.com/yagent/yagent/sdk/proto"
)

// serveOn serves the call channel conn from now on, and says so in
// Describe. Call it before go-plugin serves the Plugin service.
func (s *pluginServer) serveOn(conn net.Conn) {
	s.channel = true
	go s.serveChannel(conn)
}

// serveChannel runs the calls the host sends on the call channel conn
// until the host closes it; then it cancels the calls still running.
func (s *pluginServer) serveChannel(conn net.Conn) {
	fc := wire.NewFrameConn(conn)
	defer fc.Close()
	base, cancelAll := context.WithCancel(context.Background())
	defer cancelAll()
	var mu sync.Mutex
	running := make(map[uint64]context.CancelFunc)
	work := make(chan func())
	defer close(work)
	for range wire.StreamWorkers {
		go func() {
			for fn := range work {
				fn()
			}
		}()
	}
	for {
		f, err := fc.Read()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.logger.Error("call channel", "error", err)
			}
			return
		}
		id := f.GetId()
		switch b := f.GetBody().(type) {
		case *pluginpb.Frame_Call:
			ctx, cancel := context.WithCancel(base)
			if len(f.GetTrace()) > 0 {
				ctx = metadata.NewIncomingContext(ctx, metadata.New(f.GetTrace()))
			}
			mu.Lock()
			running[id] = cancel
			mu.Unlock()
			run := func() {
				defer func() {
					mu.Lock()
					delete(running, id)
					mu.Unlock()
					cancel()
				}()
				events := &eventSender{send: func(ev *pluginpb.CallEvent) error {
					return fc.Write(&pluginpb.Frame{Id: id, Body: &pluginpb.Frame_Event{Event: ev}})
				}}
				if err := s.call(ctx, b.Call, events); err != nil && !errors.Is(err, errCallFinished) {
					s.logger.Error("send the result of a call", "tool", b.Call.GetTool(), "error", err)
				}
			}
			// On a kept worker when one is idle: a goroutine started for
			// each call grows its stack anew through the tool and its JSON.
			select {
			case work <- run:
			default:
				go run()
			}
		case *pluginpb.Frame_Cancel:
			mu.Lock()
			cancel := running[id]
			mu.Unlock()
			if cancel != nil {
				cancel()
			}
		default:
			s.logger.Error("call channel: a frame that is neither a call nor a cancel", "id", id)
		}
	}
}
