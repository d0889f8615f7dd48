package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/yagent/yagent/host/audit"
)

// lockedBuffer is a bytes.Buffer the command writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestAuditFollow runs yagent audit --follow over a folder a writer appends
// to and rotates, and stops it as Ctrl-C would.
func TestAuditFollow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	live := filepath.Join(dir, "audit.jsonl")
	write := func(call, tool string) {
		t.Helper()
		f, err := os.OpenFile(live, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fmt.Fprintf(f, `{"time":"2026-12-01T12:00:00Z","kind":"decision","call":%q,"tool":%q,"args":{"command":"echo %s"},"decision":"allow","basis":"rule"}`+"\n", call, tool, call)
	}
	write("c1", "run_bash")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"audit", "--follow", "--tool", "run_bash", "--path", dir}, strings.NewReader(""), &out, &errOut)
	}()
	waitFor := func(what, want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(out.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: output %q, want %q in it (stderr %q)", what, out.String(), want, errOut.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("the history", "echo c1")
	write("c2", "run_bash")
	waitFor("a line appended", "echo c2")
	write("c3", "read_file")
	if err := os.Rename(live, filepath.Join(dir, "audit-20261201T120000.000000000Z.jsonl")); err != nil {
		t.Fatal(err)
	}
	write("c4", "run_bash")
	waitFor("after a rotation", "echo c4")

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("audit --follow after cancel: %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("audit --follow did not stop when cancelled")
	}
	if got := out.String(); strings.Count(got, "\n") != 3 || strings.Contains(got, "c3") {
		t.Errorf("output %q, want the three run_bash lines, c1, c2, c4", got)
	}
}

func TestAuditTextCleansAndClips(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	p := &textPrinter{w: &out, args: map[string]string{}}
	cmd := "printf '\x1b[2J'\nrm -rf " + strings.Repeat("é", 100)
	dec := &audit.Line{Time: time.Unix(0, 0), Kind: "decision", Call: "c1", Tool: "run_bash", Decision: "ask", Basis: "guard",
		Answer: &audit.LineAnswer{Approved: false, By: "user"}}
	quoted, _ := json.Marshal(cmd)
	dec.Args = map[string]json.RawMessage{"command": quoted}
	p.remember(dec)
	if err := p.print(dec); err != nil {
		t.Fatal(err)
	}
	p.remember(&audit.Line{Kind: "call", Call: "c1"})
	if err := p.print(&audit.Line{Time: time.Unix(0, 0), Kind: "call", Call: "c1", Tool: "run_bash", Code: "denied"}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("print: %q, want two lines, the newline in the command escaped", out.String())
	}
	if strings.ContainsRune(out.String(), 0x1b) {
		t.Errorf("print: %q holds an escape character", out.String())
	}
	for _, l := range lines {
		arg := l[strings.Index(l, `printf '\x1b[2J'\nrm`):]
		if n := utf8.RuneCountInString(arg); n != 80 || !strings.HasSuffix(arg, "…") {
			t.Errorf("main argument %q: %d runes, want 80 ending in …", arg, n)
		}
	}
	if !strings.Contains(lines[0], "ask/guard no by user") || !strings.Contains(lines[1], "denied 0.0ms") {
		t.Errorf("print: %q, want the decision's outcome and the call's code", lines)
	}
}
