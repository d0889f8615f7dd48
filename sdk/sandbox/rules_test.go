//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/yagent/yagent/policy"
)

func TestPermits_HomeStaysPrivate(t *testing.T) {
	f := newFixture(t)
	p := f.policy()
	for _, c := range []struct {
		path  string
		write bool
		want  bool
	}{
		{filepath.Join(f.home, ".ssh", "id_test"), false, false},
		{filepath.Join(f.home, ".aws", "credentials"), false, false},
		{f.home, false, false},
		{filepath.Join(f.home, ".gitconfig"), false, true},
		{filepath.Join(f.home, ".cache"), false, true},
		{filepath.Join(f.home, ".cache", "x"), true, false},
		{filepath.Join(f.home, ".gitconfig"), true, false},
	} {
		if got := p.Permits(c.path, c.write); got != c.want {
			t.Errorf("Permits(%s, write=%v) = %v, want %v", c.path, c.write, got, c.want)
		}
	}
}

func TestPermits_EtcPrivateFiles(t *testing.T) {
	p := newFixture(t).policy()
	for _, c := range []struct {
		path string
		want bool
	}{
		{"/etc/shadow", false}, {"/etc/gshadow", false}, {"/etc/sudoers", false},
		{"/etc/passwd", true}, {"/etc/os-release", true}, {"/etc", true},
	} {
		if _, err := os.Lstat(c.path); err != nil {
			continue
		}
		if got := p.Permits(c.path, false); got != c.want {
			t.Errorf("Permits(%s) = %v, want %v", c.path, got, c.want)
		}
		if p.Permits(c.path, true) {
			t.Errorf("Permits(%s, write) = true: /etc is never written", c.path)
		}
	}
	for dir, private := range map[string][]string{
		"/etc":     {"shadow", "shadow-", "gshadow", "gshadow-", "sudoers", "sudoers.d"},
		"/etc/ssh": {"ssh_host_ed25519_key", "ssh_host_rsa_key"},
	} {
		for _, name := range private {
			if !privateEntries[dir](name) {
				t.Errorf("%s/%s is not private", dir, name)
			}
		}
	}
	if privateEntries["/etc/ssh"]("ssh_host_rsa_key.pub") || privateEntries["/etc"]("passwd") {
		t.Error("a public /etc entry is private")
	}
}

func TestPermits_WriteSet(t *testing.T) {
	f := newFixture(t)
	p := f.policy()
	for _, c := range []struct {
		path  string
		write bool
		want  bool
	}{
		{filepath.Join(f.ws, "new.txt"), true, true},
		{f.ws, true, true},
		{filepath.Join(f.outside, "data"), true, false},
		{filepath.Join(f.outside, "data"), false, false},
		{"/tmp/x", true, true},
		{"/dev/null", true, true},
		{"/dev/sda", false, false},
		{"/usr/bin/env", false, true},
		{"/usr/bin/env", true, false},
		{"/proc/self/status", false, true},
		{"/var/lib", false, false},
		{"/root/.ssh/id_rsa", false, false},
	} {
		if got := p.Permits(c.path, c.write); got != c.want {
			t.Errorf("Permits(%s, write=%v) = %v, want %v", c.path, c.write, got, c.want)
		}
	}
	if p.Permits("relative", false) {
		t.Error("Permits(relative) = true")
	}
}

func TestRuleset_WorkspaceRefersAcrossFolders(t *testing.T) {
	f := newFixture(t)
	for _, r := range f.policy().ruleset().Rules {
		if r.Path == f.ws && r.Access&accessRefer == 0 {
			t.Errorf("workspace rights %#x lack REFER: mv between its folders fails", r.Access)
		}
	}
	if rightsWrite&accessRefer == 0 {
		t.Error("rightsWrite lacks REFER")
	}
}

func TestRuleset_MissingWritePathWidensAncestor(t *testing.T) {
	f := newFixture(t)
	p := f.policy()
	p.Write = []string{filepath.Join(f.outside, "a", "b")}
	rs := p.ruleset()
	if !slices.Equal(rs.Widened, []string{f.outside}) {
		t.Errorf("Widened = %v, want [%s]", rs.Widened, f.outside)
	}
	if !p.Permits(filepath.Join(f.outside, "a", "b", "c"), true) {
		t.Error("the missing write path is not writable")
	}
}

func TestRuleset_CachesFromEnvironment(t *testing.T) {
	f := newFixture(t)
	p := f.policy()
	p.Env = append(p.Env, "GOCACHE="+filepath.Join(f.outside, "gc"), "PIP_CACHE_DIR="+filepath.Join(f.outside, "pip"))
	os.MkdirAll(filepath.Join(f.outside, "gc"), 0o755)
	os.MkdirAll(filepath.Join(f.outside, "pip"), 0o755)
	os.MkdirAll(filepath.Join(f.home, "go", "pkg", "mod"), 0o755)
	// A first download verifies against the checksum database, whose
	// latest tree go keeps beside the module cache.
	os.MkdirAll(filepath.Join(f.home, "go", "pkg", "sumdb"), 0o755)
	for _, w := range []string{
		filepath.Join(f.outside, "gc", "x"), filepath.Join(f.outside, "pip", "x"),
		filepath.Join(f.home, "go", "pkg", "mod", "x"), filepath.Join(f.home, "go", "pkg", "sumdb", "sum.golang.org", "latest"),
	} {
		if !p.Permits(w, true) {
			t.Errorf("Permits(%s, write) = false: want the cache the environment names writable", w)
		}
	}
	if p.Permits(filepath.Join(f.outside, "data"), false) {
		t.Error("a cache opened its parent")
	}
}

func TestRuleset_CacheNeverOpensTheHome(t *testing.T) {
	f := newFixture(t)
	p := f.policy()
	p.Env = append(p.Env, "GOMODCACHE="+f.home, "CARGO_HOME=/")
	if p.Permits(filepath.Join(f.home, ".ssh", "id_test"), false) || p.Permits(filepath.Join(f.home, "x"), true) {
		t.Error("GOMODCACHE=$HOME opened the home folder")
	}
}

func TestRuleset_AccountHomeToolchainOnly(t *testing.T) {
	f := newFixture(t)
	p := f.policy()
	acct := accountHome()
	if acct == "" || acct == f.home {
		t.Skip("no account home distinct from $HOME")
	}
	if _, err := os.Stat(filepath.Join(acct, ".pyenv")); err == nil && !p.Permits(filepath.Join(acct, ".pyenv"), false) {
		t.Errorf("%s/.pyenv is not readable: python3 through pyenv would fail", acct)
	}
	if _, err := os.Stat(filepath.Join(acct, ".ssh")); err == nil && p.Permits(filepath.Join(acct, ".ssh"), false) {
		t.Errorf("%s/.ssh is readable", acct)
	}
}

func TestHandledAccess_EveryFileRightOfTheABI(t *testing.T) {
	for abi, want := range map[int]uint64{
		1: 1<<13 - 1,
		2: 1<<14 - 1,
		3: 1<<15 - 1,
		5: 1<<16 - 1,
		7: 1<<16 - 1,
	} {
		if got := handledAccess(abi); got != want {
			t.Errorf("handledAccess(%d) = %#x, want %#x", abi, got, want)
		}
	}
}

func TestRoots_SortedOnceEach(t *testing.T) {
	f := newFixture(t)
	p := f.policy()
	p.Read = []string{"/usr"} // also a system root
	read, write := p.Roots()
	for name, list := range map[string][]string{"read": read, "write": write} {
		if !slices.IsSorted(list) || len(slices.Compact(slices.Clone(list))) != len(list) {
			t.Errorf("%s roots are not sorted once each: %v", name, list)
		}
	}
	if !slices.Contains(write, f.ws) || slices.Contains(read, "/etc/shadow") || !slices.Contains(read, "/etc/passwd") {
		t.Errorf("Roots: read %v, write %v", read, write)
	}
}

func TestIsPrivate_LinkTargetsBeneathPrivateEntries(t *testing.T) {
	for path, want := range map[string]bool{
		"/etc/shadow":                       true,
		"/etc/ssl/private/key.pem":          true,
		"/etc/sudoers.d/admins":             true,
		"/etc/ssh/ssh_host_ed25519_key":     true,
		"/etc/ssh/ssh_host_ed25519_key.pub": false,
		"/etc/passwd":                       false,
		"/usr/share/zoneinfo/UTC":           false,
	} {
		if got := isPrivate(path); got != want {
			t.Errorf("isPrivate(%s) = %v, want %v", path, got, want)
		}
	}
}

// A write path that does not exist, whose nearest existing folder holds a
// home or the private files of /etc, opens nothing: widening there would
// open the home's private part, or /etc/shadow.
func TestRuleset_MissingWriteUnderPrivateStaysClosed(t *testing.T) {
	f := newFixture(t)
	for _, missing := range []string{filepath.Join(filepath.Dir(f.home), "new-file"), "/etc/sha", "/etc/ssh/new"} {
		p := f.policy()
		p.Write = []string{missing}
		rs := p.ruleset()
		if len(rs.Widened) > 0 || len(rs.Unopened) != 1 || rs.Unopened[0].Path != missing {
			t.Errorf("Write %s: Widened %v, Unopened %v; want nothing widened, it unopened", missing, rs.Widened, rs.Unopened)
		}
		for _, private := range []string{filepath.Join(f.home, ".ssh", "id_test"), "/etc/shadow"} {
			if p.Permits(private, false) {
				t.Errorf("Write %s: %s became readable", missing, private)
			}
		}
	}
}

// TestWriteRoots_WhatCommandsMayChange: WriteRoots names what the ruleset
// lets a command write (the workspace, /tmp, $TMPDIR, the caches the
// environment names, the policy's write paths, /dev/shm) and nothing a
// command may only read or not reach at all.
func TestWriteRoots_WhatCommandsMayChange(t *testing.T) {
	f := newFixture(t)
	gc, tmp, extra := filepath.Join(f.outside, "gc"), filepath.Join(f.outside, "tmp"), filepath.Join(f.outside, "extra")
	for _, d := range []string{gc, tmp, extra} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := f.policy()
	p.Env = append(p.Env, "GOCACHE="+gc, "TMPDIR="+tmp)
	p.Write = []string{extra}
	p.Read = []string{f.outside}
	roots := p.WriteRoots()
	if !slices.IsSorted(roots) || len(slices.Compact(slices.Clone(roots))) != len(roots) {
		t.Errorf("WriteRoots are not sorted once each: %v", roots)
	}
	want := []string{f.ws, gc, tmp, extra, policy.ResolvePath("/tmp")}
	if _, err := os.Stat("/dev/shm"); err == nil {
		want = append(want, policy.ResolvePath("/dev/shm"))
	}
	for _, w := range want {
		if !slices.Contains(roots, w) {
			t.Errorf("WriteRoots lacks %s: %v", w, roots)
		}
		if !p.Permits(filepath.Join(w, "new-file"), true) {
			t.Errorf("Permits(%s/new-file, write) = false, yet WriteRoots names it", w)
		}
	}
	for _, r := range roots {
		for _, not := range []string{f.outside, f.home, "/usr", "/etc", "/"} {
			if r == not || policy.Within(r, not, true) {
				t.Errorf("WriteRoots holds %s, which commands may not write (root %s)", not, r)
			}
		}
	}
}
