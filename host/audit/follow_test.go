package audit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// logWriter plays the writer: it appends to the live file through one open
// file, and rotates by renaming it and creating a new one.
type logWriter struct {
	t   *testing.T
	dir string
	f   *os.File
	n   int // rotations so far, to name them apart
}

func newLogWriter(t *testing.T, dir string) *logWriter {
	w := &logWriter{t: t, dir: dir}
	w.create()
	t.Cleanup(func() { w.f.Close() })
	return w
}

func (w *logWriter) create() {
	f, err := os.OpenFile(filepath.Join(w.dir, readLiveName), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		w.t.Fatal(err)
	}
	w.f = f
}

// line writes call's line whole; part writes s as it is.
func (w *logWriter) line(call string) { w.part(lineFor(call) + "\n") }

func (w *logWriter) part(s string) {
	if _, err := w.f.WriteString(s); err != nil {
		w.t.Fatal(err)
	}
}

func (w *logWriter) rotate() {
	w.n++
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(w.n) * time.Millisecond)
	name := readRotatedPrefix + at.Format(readRotatedLayout) + readRotatedSuffix
	if err := os.Rename(filepath.Join(w.dir, readLiveName), filepath.Join(w.dir, name)); err != nil {
		w.t.Fatal(err)
	}
	w.f.Close()
	w.create()
}

func lineFor(call string) string {
	return fmt.Sprintf(`{"time":"2026-12-01T12:00:00Z","kind":"call","call":%q,"tool":"read_file"}`, call)
}

// collect gathers the calls a follower hands on.
type collect struct {
	mu    sync.Mutex
	calls []string
	warns []string
}

func (c *collect) emit(l *Line) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, l.Call)
	return nil
}

func (c *collect) warn(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.warns = append(c.warns, err.Error())
}

func (c *collect) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.calls)
}

// TestFollowPollAcrossRotations drives the follower's polls one by one, so
// what the writer does between two polls is exact.
func TestFollowPollAcrossRotations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	w := newLogWriter(t, dir)
	c := &collect{}
	fl := &follower{r: &Reader{Dir: dir, Warn: c.warn}, emit: c.emit}
	defer fl.close(false)
	step := func(what string, want ...string) {
		t.Helper()
		if err := fl.poll(ctx); err != nil {
			t.Fatalf("%s: poll: %v", what, err)
		}
		if got := c.got(); !slices.Equal(got, want) {
			t.Fatalf("%s: got %q, want %q", what, got, want)
		}
	}

	w.line("a")
	step("a line", "a")
	w.part(lineFor("b")[:20])
	step("half a line waits", "a")
	w.part(lineFor("b")[20:] + "\n")
	step("the line ended", "a", "b")

	w.line("c")
	w.rotate()
	w.line("d")
	step("one rotation", "a", "b", "c", "d")

	w.line("e")
	w.rotate()
	w.line("f")
	w.rotate()
	w.line("g")
	step("two rotations between polls", "a", "b", "c", "d", "e", "f", "g")

	w.rotate() // and the new live file not there yet
	if err := os.Remove(filepath.Join(dir, readLiveName)); err != nil {
		t.Fatal(err)
	}
	step("rotated, no live file", "a", "b", "c", "d", "e", "f", "g")
	step("still no live file", "a", "b", "c", "d", "e", "f", "g")
	w.f.Close()
	w.create()
	w.line("h")
	step("the live file back", "a", "b", "c", "d", "e", "f", "g", "h")

	if len(c.warns) != 0 {
		t.Errorf("warnings %q, want none", c.warns)
	}
}

func TestFollowPollRotatedWithLineCutShort(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := newLogWriter(t, dir)
	c := &collect{}
	fl := &follower{r: &Reader{Dir: dir, Warn: c.warn}, emit: c.emit}
	defer fl.close(false)
	w.line("a")
	w.part(`{"time":"2026-`)
	if err := fl.poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.rotate()
	w.line("b")
	if err := fl.poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := c.got(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("got %q, want a, b", got)
	}
	if len(c.warns) != 1 || !strings.Contains(c.warns[0], "audit.jsonl:2: line cut short (no newline at the end of the file, since rotated)") {
		t.Errorf("warnings %q, want the cut line named at :2", c.warns)
	}
}

// TestFollowStreamsUntilCancelled runs Follow itself: the history first,
// then lines as they come, a rotation between, and a return on cancel.
func TestFollowStreamsUntilCancelled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := newLogWriter(t, dir)
	w.line("old")
	w.part(strings.Replace(lineFor("other tool"), "read_file", "run_bash", 1) + "\n")
	w.rotate()
	w.line("live")

	c := &collect{}
	r := &Reader{Dir: dir, Filter: Filter{Tool: "read_file"}, Poll: 5 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Follow(ctx, c.emit) }()

	waitFor := func(what string, want ...string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !slices.Equal(c.got(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: got %q, want %q", what, c.got(), want)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	waitFor("the history", "old", "live")
	w.line("new")
	waitFor("a new line", "old", "live", "new")
	w.part(strings.Replace(lineFor("other tool"), "read_file", "run_bash", 1) + "\n")
	w.rotate()
	w.line("after")
	waitFor("after a rotation", "old", "live", "new", "after")

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Follow after cancel: %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Follow did not return after cancel")
	}
}

func TestFollowNoFolder(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "none")
	err := (&Reader{Dir: dir}).Follow(context.Background(), func(*Line) error { return nil })
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Follow(missing folder): %v, want an error naming %s", err, dir)
	}
}

// TestFollowConcurrentRotations has a writer rotate every ten lines while
// Follow polls every millisecond: every line comes once, in order.
func TestFollowConcurrentRotations(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := newLogWriter(t, dir)
	c := &collect{}
	r := &Reader{Dir: dir, Poll: time.Millisecond, Warn: c.warn}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Follow(ctx, c.emit) }()
	const n = 2000
	var want []string
	for i := range n {
		call := fmt.Sprint(i)
		want = append(want, call)
		w.line(call)
		if i%10 == 9 {
			w.rotate()
		}
		if i%50 == 0 {
			time.Sleep(time.Millisecond) // let the follower in mid-stream
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(c.got()) < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Follow: %v", err)
	}
	got := c.got()
	if !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("got %d lines, want %d; first difference at %d: %q, want %q", len(got), n, i, got[i], want[i])
			}
		}
		t.Fatalf("got %d lines, want %d", len(got), n)
	}
	if len(c.warns) != 0 {
		t.Errorf("warnings %q, want none", c.warns)
	}
}
