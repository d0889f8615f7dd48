package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sideBySide is how many calls the reply tests make at once: more than the
// lane's workers, so that buffers go back to resultBufs and out again
// while answers are still being written.
const sideBySide = 48

// padOf is call n's argument, and so part of its answer's text: 8 KiB that
// no other call's answer holds.
func padOf(n int) string { return strings.Repeat(fmt.Sprintf("<%04d>", n), 8<<10/6) }

// checkEcho fails unless text is the echo of call n's arguments.
func checkEcho(t *testing.T, n int, text string) {
	t.Helper()
	want := fmt.Sprintf(`echo {"pad":%q}`, padOf(n))
	if text != want {
		i := 0
		for i < min(len(text), len(want)) && text[i] == want[i] {
			i++
		}
		t.Errorf("call %d: its answer differs from byte %d of %d (len %d): %.40q", n, i, len(want), len(text), text[i:])
	}
}

// TestLaneReply_AnswersSideBySideKeepTheirOwnBytes: calls answered side by
// side on the stdio lane each get their own answer whole, though each
// answer is written from a buffer that goes back for another call's once
// written: a buffer given back before its answer is written (the client
// here reads slowly, so writes wait) shows as another call's bytes.
func TestLaneReply_AnswersSideBySideKeepTheirOwnBytes(t *testing.T) {
	t.Parallel()
	srv, sdkCalls := laneServer(t)
	_, inW, outR := runOnPipes(t, srv)
	out := bufio.NewReaderSize(outR, 64<<10)
	io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`+"\n")
	if _, err := out.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	go func() {
		for n := 1; n <= sideBySide; n++ {
			io.WriteString(inW, call(fmt.Sprint(n), fmt.Sprintf(`{"name":"echo","arguments":{"pad":%q}}`, padOf(n)))+"\n")
		}
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		for range sideBySide {
			line, err := out.ReadString('\n')
			if err != nil {
				return
			}
			lines <- line
		}
	}()
	seen := map[int]bool{}
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for range sideBySide {
		var line string
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the answers ended after %d", len(seen))
			}
			line = l
		case <-timeout.C:
			// Answers whose bytes ran together: fewer lines than calls.
			outR.Close()
			t.Fatalf("%d of %d answers within 10s", len(seen), sideBySide)
		}
		var m struct {
			ID     int
			Result struct {
				Content []struct{ Text string }
			}
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil || len(m.Result.Content) != 1 {
			t.Fatalf("not an answer (%v): %.200s", err, line)
		}
		seen[m.ID] = true
		checkEcho(t, m.ID, m.Result.Content[0].Text)
	}
	if len(seen) != sideBySide || sdkCalls.Load() != 0 {
		t.Errorf("%d calls answered, %d of them by the SDK's path; want %d by the lane", len(seen), sdkCalls.Load(), sideBySide)
	}
}

// TestLaneReply_HTTPAnswersSideBySideKeepTheirOwnBytes: the same over the
// HTTP lane, whose answers are JSON bodies written from such buffers, for
// the Go SDK's client.
func TestLaneReply_HTTPAnswersSideBySideKeepTheirOwnBytes(t *testing.T) {
	t.Parallel()
	srv, sdkCalls := laneServer(t)
	url, _ := laneFront(t, srv, true)
	hc := &http.Client{Transport: bearer{token: testToken}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// The session's host state is made on its first request, which the
	// SDK's path serves.
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for n := 1; n <= sideBySide; n++ {
		wg.Go(func() {
			r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"pad": padOf(n)}})
			if err != nil || len(r.Content) != 1 {
				t.Errorf("call %d: %v %v", n, err, r)
				return
			}
			checkEcho(t, n, r.Content[0].(*mcp.TextContent).Text)
		})
	}
	wg.Wait()
	if sdkCalls.Load() != 0 {
		t.Errorf("%d calls answered by the SDK's path; want all by the lane", sdkCalls.Load())
	}
}
