package wire

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	pluginpb "github.com/yagent/yagent/sdk/proto"
)

// TestFrameConn_FramesOfEverySize: frames that fit the reader's buffer and
// frames larger than it arrive whole and in order, back to back, each
// decoded on its own (a frame's text is not the next frame's bytes), and a
// frame cut short is an error, not a frame.
func TestFrameConn_FramesOfEverySize(t *testing.T) {
	t.Parallel()
	a, b := net.Pipe()
	w, r := NewFrameConn(a), NewFrameConn(b)
	t.Cleanup(func() { _ = w.Close(); _ = r.Close() })
	texts := []string{"small", strings.Repeat("x", 60<<10), strings.Repeat("y", 200<<10), "after", strings.Repeat("z", 64<<10)}
	go func() {
		for i, text := range texts {
			ev := &pluginpb.CallEvent{Event: &pluginpb.CallEvent_Result{Result: &pluginpb.CallResult{Text: text}}}
			if err := w.Write(&pluginpb.Frame{Id: uint64(i), Body: &pluginpb.Frame_Event{Event: ev}}); err != nil {
				return
			}
		}
		// A header promising more than follows, then the end.
		_, _ = a.Write([]byte{0, 0, 1, 0, 1, 2, 3})
		_ = a.Close()
	}()
	var got []*pluginpb.Frame
	for range texts {
		f, err := r.Read()
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
	if f, err := r.Read(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a frame cut short: %v, %v; want io.ErrUnexpectedEOF", f, err)
	}
}
