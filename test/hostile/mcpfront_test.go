package hostile

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mcpfrontServer is a `yagent serve` driven through raw pipes, one
// JSON-RPC line at a time, as a client with bugs (or an attacker on its
// stdin) would.
type mcpfrontServer struct {
	t      *testing.T
	stdin  io.WriteCloser
	lines  chan []byte
	stderr *syncBuffer
}

// mcpfrontStart starts `yagent serve` on the env's workspace with the fs
// plugin alone (the others would only slow every case down), and
// initializes the session.
func mcpfrontStart(t *testing.T, e *env) *mcpfrontServer {
	t.Helper()
	dir := filepath.Join(e.root, "front-plugins")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(binDir, "plugins", "yagent-plugin-fs"), filepath.Join(dir, "yagent-plugin-fs")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(yagent, "serve", "--workspace", e.workspace, "--plugin-dir", dir)
	cmd.Env = e.environ()
	cmd.Dir = e.workspace
	s := &mcpfrontServer{t: t, lines: make(chan []byte, 16), stderr: &syncBuffer{}}
	cmd.Stderr = s.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.stdin = stdin
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			s.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(s.lines)
	}()
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hostile","version":"0"}}}`)
	if r := s.recv(); r["id"] != float64(1) || r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func (s *mcpfrontServer) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		s.t.Fatalf("write to yagent serve: %v (it has ended?)\nstderr:\n%s", err, s.stderr.String())
	}
}

// recv returns the next message yagent serve wrote; it fails when serve
// ended or said nothing for 20s.
func (s *mcpfrontServer) recv() map[string]any {
	s.t.Helper()
	select {
	case line, ok := <-s.lines:
		if !ok {
			s.t.Fatalf("yagent serve closed its output: the session ended\nstderr:\n%s", s.stderr.String())
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			s.t.Fatalf("yagent serve wrote %q: %v", line, err)
		}
		return m
	case <-time.After(20 * time.Second):
		s.t.Fatalf("no answer from yagent serve in 20s\nstderr:\n%s", s.stderr.String())
	}
	return nil
}

func mcpfrontCall(id int, args string) string {
	return `{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"tools/call","params":{"name":"read_file","arguments":` + args + `}}`
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func mcpfrontNested(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// TestMCPFrontSurvivesBadInput: a bad frame on stdin gets a JSON-RPC error
// for that message (its id when one can be found, else null) and the
// session goes on: the next valid call is answered.
func TestMCPFrontSurvivesBadInput(t *testing.T) {
	t.Parallel()
	const (
		parseError     = -32700
		invalidRequest = -32600
		invalidParams  = -32602
	)
	cases := []struct {
		name     string
		frame    func() string
		wantCode float64
		wantID   any // nil: null
	}{
		{"a line that is not JSON", func() string { return "hello, server" }, parseError, nil},
		{"an object cut short, then the next line", func() string { return `{"jsonrpc":"2.0","id":7,"method":"tools/list"` }, parseError, nil},
		{"two messages on one line", func() string {
			return `{"jsonrpc":"2.0","id":7,"method":"tools/list"} {"jsonrpc":"2.0","id":8,"method":"tools/list"}`
		}, parseError, nil},
		{"bytes that are not UTF-8", func() string { return "\xff\xfe\xfd" }, parseError, nil},
		{"a NUL byte", func() string { return "\x00" }, parseError, nil},
		{"JSON that is a number", func() string { return "42" }, invalidRequest, nil},
		{"JSON that is a string", func() string { return `"tools/list"` }, invalidRequest, nil},
		{"an empty batch", func() string { return "[]" }, invalidRequest, nil},
		{"a batch of one call", func() string { return `[{"jsonrpc":"2.0","id":7,"method":"tools/list"}]` }, invalidRequest, nil},
		{"no method", func() string { return `{"jsonrpc":"2.0","id":7,"params":{"name":"read_file"}}` }, invalidRequest, float64(7)},
		{"no jsonrpc version", func() string { return `{"id":7,"method":"tools/list"}` }, invalidRequest, float64(7)},
		{"method not a string", func() string { return `{"jsonrpc":"2.0","id":7,"method":["tools/list"]}` }, invalidRequest, float64(7)},
		{"id an object", func() string { return `{"jsonrpc":"2.0","id":{"n":7},"method":"tools/list"}` }, invalidRequest, nil},
		{"id a boolean", func() string { return `{"jsonrpc":"2.0","id":true,"method":"tools/list"}` }, invalidRequest, nil},
		{"arguments nested 1000 deep", func() string { return mcpfrontCall(7, `{"path":"a.txt","x":`+mcpfrontNested(1000)+`}`) }, invalidParams, float64(7)},
		{"a tools/call over the 16 MiB frame limit", func() string {
			return mcpfrontCall(7, `{"path":"a.txt","pad":"`+strings.Repeat("x", 17<<20)+`"}`)
		}, invalidRequest, float64(7)},
		{"invalid UTF-8 inside a path", func() string { return mcpfrontCall(7, `{"path":"a`+"\xff"+`.txt"}`) }, invalidRequest, float64(7)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.write("a.txt", "the front is still up\n")
			s := mcpfrontStart(t, e)
			s.send(tc.frame())
			r := s.recv()
			e1, _ := r["error"].(map[string]any)
			if id, ok := r["id"]; e1 == nil || e1["code"] != tc.wantCode || !ok || id != tc.wantID {
				t.Fatalf("answer %.300v; want error %v with id %v", r, tc.wantCode, tc.wantID)
			}
			s.send(mcpfrontCall(100, `{"path":"a.txt"}`))
			r = s.recv()
			if r["id"] != float64(100) || r["result"] == nil || !strings.Contains(string(mustMarshal(r["result"])), "the front is still up") {
				t.Fatalf("the call after the bad frame: %.300v", r)
			}
		})
	}
}

func mustMarshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
