package pluginmgr

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yagent/yagent/policy"
)

// ctimeNS returns the ctime of path.
func ctimeNS(t *testing.T, path string) int64 {
	t.Helper()
	id, err := statID(path)
	if err != nil {
		t.Fatal(err)
	}
	return id.CtimeNS
}

// waitCtimeTick waits (bounded) until an inode change made now gets a
// ctime later than path's: ctime ticks coarsely.
func waitCtimeTick(t *testing.T, path string) {
	t.Helper()
	before := ctimeNS(t, path)
	probe := filepath.Join(t.TempDir(), "probe")
	for range 2000 {
		if err := os.WriteFile(probe, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if ctimeNS(t, probe) > before {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the ctime clock did not move in 2s")
}

// TestShaIndex_PatchWithRestoredMtimeIsHashed: a binary patched in place
// with its size and mtime restored is hashed again: the memo keys on ctime,
// which no user can set back.
func TestShaIndex_PatchWithRestoredMtimeIsHashed(t *testing.T) {
	t.Parallel()
	dir, cache := t.TempDir(), t.TempDir()
	bin := filepath.Join(dir, BinaryPrefix+"x")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho good\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	hashes := 0
	hash := func(p string) (string, error) { hashes++; return policy.SumFile(p) }
	idx := loadIndex(cache)
	good, _, err := idx.sum(bin, hash, agedClock)
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.save(cache); err != nil {
		t.Fatal(err)
	}

	waitCtimeTick(t, bin)
	f, err := os.OpenFile(bin, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("evil"), int64(len("#!/bin/sh\necho "))); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(bin, fi.ModTime(), fi.ModTime()); err != nil { // touch -d @old
		t.Fatal(err)
	}
	after, err := os.Stat(bin)
	if err != nil || after.Size() != fi.Size() || !after.ModTime().Equal(fi.ModTime()) {
		t.Fatalf("the patch did not keep size and mtime: %v", err)
	}

	idx = loadIndex(cache)
	got, _, err := idx.sum(bin, hash, agedClock)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := policy.SumFile(bin)
	if got != want || got == good || hashes != 2 {
		t.Errorf("patched binary: sum %s after %d hashes; want its new sum %s (not the memoized %s) after 2", got, hashes, want, good)
	}
}

// TestShaIndex_RecentFileNotMemoized: a file changed within racyWindow is
// hashed on every start, since a second change in the same ctime tick
// could not be told apart.
func TestShaIndex_RecentFileNotMemoized(t *testing.T) {
	t.Parallel()
	dir, cache := t.TempDir(), t.TempDir()
	bin := fakeBinary(t, dir, "x", 0o755)
	hashes := 0
	hash := func(p string) (string, error) { hashes++; return policy.SumFile(p) }
	idx := loadIndex(cache)
	for range 2 {
		if _, _, err := idx.sum(bin, hash, time.Now); err != nil {
			t.Fatal(err)
		}
	}
	if hashes != 2 {
		t.Errorf("a file changed a moment ago was hashed %d times in two starts, want 2", hashes)
	}
}

// TestLoad_UnreadableLockPinsNothing: a lock file that cannot be parsed
// does not stop Load, pins no plugin, and is named with its fix.
func TestLoad_UnreadableLockPinsNothing(t *testing.T) {
	t.Parallel()
	sum, err := policy.SumFile(filepath.Join(testPluginDir, BinaryPrefix+"test"))
	if err != nil {
		t.Fatal(err)
	}
	lockFile := filepath.Join(t.TempDir(), "plugins.lock")
	full := `{"plugins": {"test": {"sha256": "` + sum + `"}}}`
	if err := os.WriteFile(lockFile, []byte(full[:len(full)-5]), 0o644); err != nil { // truncated
		t.Fatal(err)
	}
	m := newManager(t, Options{LockFile: lockFile})
	plugins, warnings, err := m.Load(context.Background())
	if err != nil || len(plugins) != 1 {
		t.Fatalf("Load with a truncated lock file: %d plugins, %v; want the plugin and no error", len(plugins), err)
	}
	if p := plugins[0]; p.Pinned || p.Refused != nil {
		t.Errorf("plugin pinned=%v refused=%v; want loaded, unpinned", p.Pinned, p.Refused)
	}
	w := strings.Join(warnings, "\n")
	for _, s := range []string{lockFile, "yagent plugins pin --reset"} {
		if !strings.Contains(w, s) {
			t.Errorf("warnings %q do not name %q", w, s)
		}
	}
}

func TestLock_ResetUnpin(t *testing.T) {
	t.Parallel()
	sum := func(c string) string { return strings.Repeat(c, 64) }
	path := filepath.Join(t.TempDir(), "plugins.lock")
	if err := os.WriteFile(path, []byte(`{"plugins": {"a": `), 0o644); err != nil {
		t.Fatal(err)
	}
	a := &Plugin{Name: "a", SHA256: sum("a")}
	b := &Plugin{Name: "b", SHA256: sum("b")}
	var lerr *LockError
	if err := WriteLock(path, []*Plugin{a}); !errors.As(err, &lerr) || lerr.Path != path || !strings.Contains(err.Error(), "--reset") {
		t.Fatalf("WriteLock over a corrupt file: %v; want a *LockError naming %s and --reset", err, path)
	}
	if err := Unpin(path, []string{"a"}); !errors.As(err, &lerr) {
		t.Fatalf("Unpin on a corrupt file: %v; want a *LockError", err)
	}
	if err := ResetLock(path, []*Plugin{a, b}); err != nil {
		t.Fatal(err)
	}
	if old, err := os.ReadFile(path + ".bad"); err != nil || string(old) != `{"plugins": {"a": ` {
		t.Errorf("the broken file was not kept as .bad: %q, %v", old, err)
	}
	// A reset over a readable file drops its entries too.
	if err := ResetLock(path, []*Plugin{a}); err != nil {
		t.Fatal(err)
	}
	if l, err := ReadLock(path); err != nil || len(l.Plugins) != 1 {
		t.Fatalf("after reset to a alone: %+v, %v", l.Plugins, err)
	}
	if err := WriteLock(path, []*Plugin{b}); err != nil {
		t.Fatal(err)
	}
	if err := Unpin(path, []string{"b", "nope"}); err == nil || !strings.Contains(err.Error(), `"nope" is not pinned`) {
		t.Errorf("Unpin of a name not pinned: %v", err)
	}
	if err := Unpin(path, []string{"b"}); err != nil {
		t.Fatal(err)
	}
	l, err := ReadLock(path)
	if err != nil || len(l.Plugins) != 1 || l.Plugins["a"].SHA256 != sum("a") {
		t.Errorf("after reset and unpin b: %+v, %v; want only a", l.Plugins, err)
	}
}

// TestVerify_HashesAgain: with a hash func, Verify trusts no sum Load
// computed: a pinned binary changed since, or gone, fails.
func TestVerify_HashesAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := fakeBinary(t, dir, "a", 0o755)
	good, _ := policy.SumFile(bin)
	gone := filepath.Join(dir, BinaryPrefix+"gone")
	l := Lock{Plugins: map[string]LockEntry{
		"a":    {SHA256: good},
		"gone": {SHA256: good, Path: gone},
		"away": {SHA256: good, Path: "/nowhere"},
	}}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nevil\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plugins := []*Plugin{
		{Name: "a", Path: bin, SHA256: good},     // Load's sum, stale
		{Name: "gone", Path: gone, SHA256: good}, // deleted after Load
	}
	got := map[string]Verdict{}
	for _, v := range l.Verify(plugins, policy.SumFile) {
		got[v.Name] = v
	}
	for name, want := range map[string]PinStatus{"a": PinMismatch, "gone": PinMissing, "away": PinMissing} {
		if v := got[name]; v.Status != want || !v.Bad() {
			t.Errorf("%s: %s (bad %v), want %s and bad", name, v.Status, v.Bad(), want)
		}
	}
	if (Verdict{Status: PinNone}).Bad() || (Verdict{Status: PinUnknown}).Bad() {
		t.Error("an unpinned plugin fails verification")
	}
}

// TestLoad_ManagedLock: the admin's pin holds whatever the user's files
// say. A forged sha index entry cannot vouch for a plugin it pins (its
// binary is hashed on every start), and a binary with another sum is
// refused before it is ever launched, whatever the user's lock pins.
func TestLoad_ManagedLock(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	loadTest(t, newManager(t, Options{CacheDir: cache})) // the index now holds the test plugin
	bin := filepath.Join(testPluginDir, BinaryPrefix+"test")
	idx := loadIndex(cache)
	e, ok := idx.Entries[bin]
	if !ok {
		t.Fatal("the cold start left no index entry")
	}
	want := e.SHA256
	e.SHA256 = strings.Repeat("0", 64) // forged
	idx.Entries[bin], idx.dirty = e, true
	if err := idx.save(cache); err != nil {
		t.Fatal(err)
	}
	if p := loadTest(t, newManager(t, Options{CacheDir: cache})); p.SHA256 == want {
		t.Fatal("the forged index entry was not used by a plain warm start; the test proves nothing")
	}
	pins := func(sum string) *Lock { return &Lock{Plugins: map[string]LockEntry{"test": {SHA256: sum}}} }
	p := loadTest(t, newManager(t, Options{CacheDir: cache, ManagedLock: pins(want), ManagedLockFile: "/etc/yagent/plugins.lock"}))
	if p.SHA256 != want || !p.Pinned {
		t.Errorf("managed pin: sum %s pinned %v, want the binary's own %s, pinned", p.SHA256, p.Pinned, want)
	}

	// Another sum: refused, never launched (so never described and cached).
	userLock := filepath.Join(t.TempDir(), "plugins.lock")
	if err := os.WriteFile(userLock, []byte(`{"plugins": {"test": {"sha256": "`+want+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	fresh := t.TempDir()
	m := newManager(t, Options{CacheDir: fresh, LockFile: userLock, ManagedLock: pins(strings.Repeat("1", 64)), ManagedLockFile: "/etc/yagent/plugins.lock"})
	plugins, _, err := m.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plugins {
		if p.Name != "test" {
			continue
		}
		if p.Refused == nil || p.Pinned || !strings.Contains(p.Refused.Error(), "/etc/yagent/plugins.lock") {
			t.Errorf("refused %v pinned %v; want refused, naming the managed lock file", p.Refused, p.Pinned)
		}
		if len(p.Specs) > 0 {
			t.Error("the refused plugin was launched and described")
		}
		if _, ok := loadSpecs(fresh, want); ok {
			t.Error("the refused plugin's specs were cached: it was launched")
		}
	}
}

// TestReadLock_ErrorNamesNoUserFix: ReadLock names the file but no fix (a
// managed lock is not the user's to repair); WithUserFix adds the user's.
func TestReadLock_ErrorNamesNoUserFix(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "plugins.lock")
	if err := os.WriteFile(path, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadLock(path)
	if err == nil || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "--reset") {
		t.Errorf("ReadLock: %v; want the path and no user fix", err)
	}
	if err := WithUserFix(err); !strings.Contains(err.Error(), "yagent plugins pin --reset") || !strings.Contains(err.Error(), path) {
		t.Errorf("WithUserFix: %v", err)
	}
}
