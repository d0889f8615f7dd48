package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// stepClock returns a clock a microsecond later on every read, so rotated
// names differ and sort in write order.
func stepClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 12, 1, 17, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Microsecond)
		return t
	}
}

func readLines(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWriter_ModesAndKey: the folder is made 0700 on first use, the live
// file and the key 0600; the key is 32 bytes and the same on every open.
func TestWriter_ModesAndKey(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a", "audit")
	w := NewWriter(WriterOptions{Dir: dir})
	if _, err := os.Stat(dir); err == nil {
		t.Fatal("the folder exists before the first line")
	}
	if err := w.WriteLine([]byte("{\"kind\":\"call\"}\n")); err != nil {
		t.Fatal(err)
	}
	k1, err := w.Key()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, filepath.Join(dir, LiveName): 0o600, filepath.Join(dir, keyName): 0o600} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s mode %v, want %v", name, fi.Mode(), want)
		}
	}
	if len(k1) != keyBytes {
		t.Errorf("key of %d bytes, want %d", len(k1), keyBytes)
	}
	k2, err := NewWriter(WriterOptions{Dir: dir}).Key()
	if err != nil || string(k1) != string(k2) {
		t.Errorf("second open's key differs (%v)", err)
	}
	if err := w.WriteLine([]byte("{}\n")); err == nil {
		t.Error("a closed writer took a line")
	}
}

// TestWriter_Rotation: past max size the live file is renamed with its
// time, and only the newest Keep rotated files stay, every line of them in
// order.
func TestWriter_Rotation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const keep = 3
	w := NewWriter(WriterOptions{Dir: dir, MaxSize: 100, Keep: keep, Now: stepClock()})
	const n = 40
	for i := range n {
		if err := w.WriteLine(fmt.Appendf(nil, "{\"n\":%3d,\"pad\":\"%s\"}\n", i, strings.Repeat("x", 20))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rotated, err := Rotated(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rotated) != keep {
		t.Fatalf("%d rotated files %v, want %d", len(rotated), rotated, keep)
	}
	var got []int
	for _, name := range append(rotated, LiveName) {
		if !strings.HasPrefix(name, "audit-2026") && name != LiveName {
			t.Errorf("rotated file %q is not named by its UTC time", name)
		}
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != 0o600 || fi.Size() > 100 {
			t.Errorf("%s: mode %v size %d, want 0600 and at most 100 bytes", name, fi.Mode(), fi.Size())
		}
		for _, l := range readLines(t, filepath.Join(dir, name)) {
			var v struct{ N int }
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Fatalf("%s: %q: %v", name, l, err)
			}
			got = append(got, v.N)
		}
	}
	for i, v := range got {
		if want := n - len(got) + i; v != want {
			t.Fatalf("lines kept %v: want the newest, in order, ending with %d", got, n-1)
		}
	}
}

// TestWriter_ConcurrentWholeLines: lines written and appended at once
// from many goroutines, across rotations, come out whole.
func TestWriter_ConcurrentWholeLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := NewWriter(WriterOptions{Dir: dir, MaxSize: 64 << 10, Keep: 1000, Now: stepClock()})
	const writers, each = 8, 400
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				line := fmt.Appendf(nil, "{\"g\":%d,\"i\":%d,\"pad\":\"%s\"}\n", g, i, strings.Repeat("y", (g*37+i)%700))
				write := w.WriteLine
				if g%2 == 0 {
					write = w.AppendLine
				}
				if err := write(line); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rotated, _ := Rotated(dir)
	if len(rotated) == 0 {
		t.Fatal("no rotation happened; the test needs some")
	}
	seen := map[[2]int]bool{}
	for _, name := range append(rotated, LiveName) {
		for _, l := range readLines(t, filepath.Join(dir, name)) {
			var v struct{ G, I int }
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Fatalf("%s: a broken line %q: %v", name, l, err)
			}
			seen[[2]int{v.G, v.I}] = true
		}
	}
	if len(seen) != writers*each {
		t.Errorf("%d distinct lines, want %d", len(seen), writers*each)
	}
}

// TestWriter_Unwritable: a folder that cannot be made is an error the
// caller gets, on every line, naming the cause.
func TestWriter_Unwritable(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	w := NewWriter(WriterOptions{Dir: filepath.Join(file, "audit")})
	defer w.Close()
	for range 2 {
		err := w.WriteLine([]byte("{}\n"))
		if err == nil || !strings.Contains(err.Error(), "not a directory") {
			t.Errorf("err %v, want the cause (not a directory)", err)
		}
	}
}
