package audit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yagent/yagent/call/adapter"
)

// TestObserver_RequiredWritesThrough: under required the decision line is
// in the file when Decide returns, whatever the flusher does; under on it
// may wait in the buffer, and the call line does.
func TestObserver_RequiredWritesThrough(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{ModeRequired, ModeOn} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			o := New(Options{Mode: mode, Writer: NewWriter(WriterOptions{Dir: dir, SyncPeriod: time.Hour})})
			defer o.Close()
			rec := &adapter.CallRecord{ID: "c1", Tool: "t", Decided: true, Action: adapter.Allow, Basis: adapter.BasisWorkspace, Allowed: true, Started: time.Now()}
			if err := o.Decide(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(filepath.Join(dir, LiveName))
			inFile := strings.Contains(string(b), `"kind":"decision"`)
			if mode == ModeRequired && !inFile {
				t.Error("under required the decision line was not in the file when Decide returned")
			}
			if mode == ModeOn && inFile {
				t.Error("under on the decision line was written through; want it buffered")
			}
		})
	}
}

// TestObserver_RequiredNamesTheCause: a decision line that cannot be
// written is Decide's error under required, naming the folder and the
// cause; under on it is not.
func TestObserver_RequiredNamesTheCause(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	rec := &adapter.CallRecord{ID: "c1", Tool: "t", Decided: true, Allowed: true}
	for _, mode := range []string{ModeRequired, ModeOn} {
		o := New(Options{Mode: mode, Writer: NewWriter(WriterOptions{Dir: filepath.Join(file, "audit")})})
		err := o.Decide(context.Background(), rec)
		o.Close()
		if mode == ModeOn && err != nil {
			t.Errorf("on: %v, want the call to go on", err)
		}
		if mode == ModeRequired && (err == nil || !strings.Contains(err.Error(), "not a directory") || !strings.Contains(err.Error(), file)) {
			t.Errorf("required: %v, want the folder and the cause named", err)
		}
	}
}
