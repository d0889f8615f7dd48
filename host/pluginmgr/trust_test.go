package pluginmgr

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/yagent/yagent/internal/testbuild"
	"github.com/yagent/yagent/policy"
)

// TestBuiltSumsVar: the name make build and testbuild link the sums with
// is the variable's.
func TestBuiltSumsVar(t *testing.T) {
	t.Parallel()
	want := reflect.TypeFor[Manager]().PkgPath() + ".builtSums"
	for name, got := range map[string]string{"BuiltSumsVar": BuiltSumsVar, "testbuild.SumsVar": testbuild.SumsVar} {
		if got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if sums, err := BuiltSums(); len(sums) != 0 || err != nil {
		t.Errorf("a test binary was linked with no sums, yet BuiltSums = %v, %v", sums, err)
	}
}

func TestParseBuiltSums(t *testing.T) {
	t.Parallel()
	a, b := strings.Repeat("a", 64), strings.Repeat("b", 64)
	for _, c := range []struct {
		in   string
		want map[string]string
		bad  bool
	}{
		{in: "", want: map[string]string{}},
		{in: "fs:" + a, want: map[string]string{"fs": a}},
		{in: "fs:" + a + ",shell:" + b, want: map[string]string{"fs": a, "shell": b}},
		{in: " fs:" + a + " , my-plugin_2:" + b + " ", want: map[string]string{"fs": a, "my-plugin_2": b}},
		{in: "fs", bad: true},
		{in: "fs:", bad: true},
		{in: ":" + a, bad: true},
		{in: "fs:" + a[:63], bad: true},
		{in: "fs:" + strings.ToUpper(a), bad: true},
		{in: "FS:" + a, bad: true},
		{in: "fs:" + a + ",", bad: true},
		{in: "fs:" + a + ",fs:" + b, bad: true},
		{in: "fs:" + a + ",shell=" + b, bad: true},
		{in: "fs:" + a + ":" + b, bad: true},
	} {
		got, err := ParseBuiltSums(c.in)
		if c.bad {
			if err == nil || len(got) != 0 {
				t.Errorf("ParseBuiltSums(%q) = %v, %v; want no sums and an error", c.in, got, err)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Errorf("ParseBuiltSums(%q) = %v, %v; want %v", c.in, got, err, c.want)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("ParseBuiltSums(%q)[%s] = %q, want %q", c.in, k, got[k], v)
			}
		}
	}
}

func FuzzParseBuiltSums(f *testing.F) {
	f.Add("fs:" + strings.Repeat("a", 64))
	f.Add("fs:" + strings.Repeat("a", 64) + ",shell:" + strings.Repeat("b", 64))
	f.Add(",,:")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseBuiltSums(s)
		if got == nil || err != nil && len(got) != 0 {
			t.Fatalf("ParseBuiltSums(%q) = %v, %v: want a map, empty on error", s, got, err)
		}
		for name, sum := range got {
			if !ValidName(name) || !shaPattern.MatchString(sum) {
				t.Fatalf("ParseBuiltSums(%q) vouches for %q:%q", s, name, sum)
			}
		}
	})
}

// TestWritableIn: a path is writable when it lies in a root as named or
// resolved, or when a link on its way lives in a root; otherwise not.
func TestWritableIn(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w, o := filepath.Join(base, "w"), filepath.Join(base, "o") // writable, out of reach
	for _, d := range []string{filepath.Join(w, "bin", "plugins"), filepath.Join(w, "real"), filepath.Join(o, "real"), filepath.Join(o, "plugins")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, at string) {
		t.Helper()
		if err := os.Symlink(target, at); err != nil {
			t.Fatal(err)
		}
	}
	link(filepath.Join(w, "real"), filepath.Join(o, "to-w"))   // o/to-w -> w/real
	link(filepath.Join(o, "real"), filepath.Join(w, "to-o"))   // w/to-o -> o/real
	link(filepath.Join(w, "to-o"), filepath.Join(o, "chain"))  // o/chain -> w/to-o -> o/real
	link("../real", filepath.Join(o, "plugins", "rel"))        // o/plugins/rel -> o/real
	link(filepath.Join(o, "loop2"), filepath.Join(o, "loop1")) // a loop
	link(filepath.Join(o, "loop1"), filepath.Join(o, "loop2"))
	calls := atomic.Int32{}
	judge := WritableIn(func() []WriteRoot {
		calls.Add(1)
		return []WriteRoot{{Path: w, Name: "the workspace " + w}}
	})
	bin := BinaryPrefix + "zz"
	for _, c := range []struct {
		name, path string
		want       string // a part of the answer; "" = not writable
	}{
		{"out of reach", filepath.Join(o, "plugins", bin), ""},
		{"a missing folder out of reach", filepath.Join(o, "nowhere", bin), ""},
		{"in the root", filepath.Join(w, "bin", "plugins", bin), "inside the workspace " + w},
		{"the root itself", w, "inside the workspace"},
		{"a sibling named like the root", filepath.Join(base, "w2", bin), ""},
		{"named in the root, resolving out", filepath.Join(w, "to-o", bin), "inside the workspace"},
		{"a link out of reach into the root", filepath.Join(o, "to-w", bin), "it resolves to " + filepath.Join(w, "real", bin)},
		{"a link out of reach through a link in the root", filepath.Join(o, "chain", bin), "reached through the link " + filepath.Join(w, "to-o")},
		{"a relative link out of reach", filepath.Join(o, "plugins", "rel", bin), ""},
		{"a loop of links", filepath.Join(o, "loop1", bin), "more than"},
		{"relative to the working folder, out of reach", "relative/" + bin, ""},
	} {
		got := judge(c.path)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: Writable(%s) = %q, want %q", c.name, c.path, got, c.want)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the roots were computed %d times, want once", n)
	}
	if got := WritableIn(func() []WriteRoot { return []WriteRoot{{Path: "/", Name: "/"}} })(filepath.Join(o, bin)); got == "" {
		t.Error("under a root of / nothing was writable")
	}
}

// TestLoad_UntrustedRefused: a plugin binary a command could have written
// is launched (or described from the spec cache) only when a pin of the
// user's or the admin's, or the sums the host was built with, vouch for
// it; the dev override and folders no command can write are not judged.
func TestLoad_UntrustedRefused(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join(testPluginDir, BinaryPrefix+"test"))
	if err != nil {
		t.Fatal(err)
	}
	good, err := policy.SumFile(filepath.Join(testPluginDir, BinaryPrefix+"test"))
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Repeat("e", 64)
	pins := func(sum string) *Lock { return &Lock{Plugins: map[string]LockEntry{"test": {SHA256: sum}}} }
	for _, c := range []struct {
		name string
		opts func(o *Options, dir string)
		// writable says a command could write the plugin folder.
		writable bool
		// lock is what the user's lock file pins test to; "" = nothing.
		lock string
		// want: "" = loads; else a part of the refusal.
		want     string
		pinned   bool
		built    bool
		mismatch bool
	}{
		{name: "a folder no command can write: loads unpinned", writable: false},
		{name: "writable, nothing vouches: refused", writable: true,
			want: "is in a folder commands can write (inside the workspace"},
		{name: "writable, built without sums: refused, saying so", writable: true,
			want: "built without its plugins' sums"},
		{name: "writable, built with another sum: refused", writable: true,
			opts: func(o *Options, _ string) { o.Built = map[string]string{"test": other} },
			want: "not the binary this yagent was built with"},
		{name: "writable, built with other plugins only: refused", writable: true,
			opts: func(o *Options, _ string) { o.Built = map[string]string{"fs": good} },
			want: "not one of the plugins this yagent was built with"},
		{name: "writable, the built sum: loads", writable: true, built: true,
			opts: func(o *Options, _ string) { o.Built = map[string]string{"test": good} }},
		{name: "writable, pinned: loads pinned", writable: true, lock: good, pinned: true},
		{name: "writable, pinned to another sum: the pin mismatch", writable: true, lock: other, want: "the lock file pins", mismatch: true},
		{name: "writable, the admin's pin: loads", writable: true, pinned: true,
			opts: func(o *Options, _ string) { o.ManagedLock, o.ManagedLockFile = pins(good), "/etc/yagent/plugins.lock" }},
		{name: "writable dev override: loads, not judged", writable: true,
			opts: func(o *Options, dir string) { o.DevDir, o.Dirs = dir, []string{} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, cache := t.TempDir(), t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, BinaryPrefix+"test"), src, 0o755); err != nil {
				t.Fatal(err)
			}
			// A binary that leaves a mark when it runs at all.
			mark := filepath.Join(t.TempDir(), "ran")
			if err := os.WriteFile(filepath.Join(dir, BinaryPrefix+"zz"), []byte("#!/bin/sh\ntouch "+mark+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			// The test plugin's specs are in the cache: a refused plugin
			// must not be described from it either.
			loadTest(t, newManager(t, Options{CacheDir: cache}))
			opts := Options{Dirs: []string{dir}, CacheDir: cache}
			if c.lock != "" {
				opts.LockFile = filepath.Join(t.TempDir(), "plugins.lock")
				if err := os.WriteFile(opts.LockFile, []byte(`{"plugins": {"test": {"sha256": "`+c.lock+`"}}}`), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			judged := atomic.Int32{}
			opts.Writable = func(path string) string {
				judged.Add(1)
				if c.writable && filepath.Dir(path) == dir {
					return "inside the workspace " + dir
				}
				return ""
			}
			if c.opts != nil {
				c.opts(&opts, dir)
			}
			plugins, warnings, err := newManager(t, opts).Load(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var p, zz *Plugin
			for _, q := range plugins {
				switch q.Name {
				case "test":
					p = q
				case "zz":
					zz = q
				}
			}
			if p == nil || zz == nil {
				t.Fatalf("Load found %d plugins, want test and zz (warnings %q)", len(plugins), warnings)
			}
			if p.SHA256 != good {
				t.Errorf("SHA256 %q, want %q whatever the verdict (pin needs it)", p.SHA256, good)
			}
			if p.Pinned != c.pinned || p.Built != c.built {
				t.Errorf("pinned %v built %v, want %v %v", p.Pinned, p.Built, c.pinned, c.built)
			}
			switch {
			case c.want == "" && p.Refused != nil:
				t.Errorf("refused: %v; want it loaded", p.Refused)
			case c.want == "" && len(p.Specs) == 0:
				t.Error("loaded without its specs")
			case c.want != "" && (p.Refused == nil || !strings.Contains(p.Refused.Error(), c.want)):
				t.Errorf("refused: %v; want a refusal saying %q", p.Refused, c.want)
			case c.want != "" && len(p.Specs) > 0:
				t.Error("refused, yet described (from the spec cache or a launch)")
			case c.want != "" && !strings.Contains(strings.Join(warnings, "\n"), p.Refused.Error()):
				t.Errorf("the warnings %q do not say why", warnings)
			}
			if c.mismatch {
				var pm *PinMismatchError
				if !errors.As(p.Refused, &pm) || p.Writable == "" {
					t.Errorf("refused %v, writable %q: want the pin mismatch, and why a command could write it", p.Refused, p.Writable)
				}
			} else if c.want != "" {
				if !IsUntrusted(p.Refused) || p.Writable == "" || !strings.Contains(p.Refused.Error(), "yagent plugins pin test") ||
					!strings.Contains(p.Refused.Error(), p.Path) {
					t.Errorf("refused %v, writable %q: want an *UntrustedError naming the binary and the pin command", p.Refused, p.Writable)
				}
			}
			// zz: nothing vouches for it but the folder.
			_, ran := os.Stat(mark)
			switch {
			case c.writable && opts.DevDir == "" && (zz.Refused == nil || !IsUntrusted(zz.Refused)):
				t.Errorf("zz: refused %v; want it refused as untrusted", zz.Refused)
			case c.writable && opts.DevDir == "" && ran == nil:
				t.Error("zz ran: a refused binary was launched")
			case (!c.writable || opts.DevDir != "") && ran != nil:
				t.Error("zz did not run where nothing judged it: the test proves nothing")
			}
			if opts.DevDir != "" && judged.Load() != 0 {
				t.Errorf("the dev override's binaries were judged %d times, want never", judged.Load())
			}
		})
	}
}

// TestVerify_Untrusted: verify says a refused untrusted plugin is
// untrusted, which fails nothing: no pin differs.
func TestVerify_Untrusted(t *testing.T) {
	t.Parallel()
	bin := fakeBinary(t, t.TempDir(), "zz", 0o755)
	sum, _ := policy.SumFile(bin)
	zz := &Plugin{Name: "zz", Path: bin, SHA256: sum, Refused: &UntrustedError{Name: "zz", Path: bin, Why: "inside /tmp"}}
	for _, l := range []Lock{{Plugins: map[string]LockEntry{}}, {Plugins: map[string]LockEntry{"zz": {SHA256: strings.Repeat("0", 64)}}}} {
		v := l.Verify([]*Plugin{zz}, policy.SumFile)
		want := PinUntrusted
		if len(l.Plugins) > 0 {
			want = PinMismatch // a pin of another sum is said as it is
		}
		if len(v) != 1 || v[0].Status != want || v[0].Bad() != (want == PinMismatch) {
			t.Errorf("Verify with lock %v = %+v; want %s", l.Plugins, v, want)
		}
	}
}
