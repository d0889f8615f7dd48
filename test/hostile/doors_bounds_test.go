package hostile

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yagent/yagent/internal/sessiontmp"
	"github.com/yagent/yagent/sdk/sandbox/cgroup"
)

// requireBounds skips t where one of the bounds is missing on this
// machine: a fork bomb or a memory filler never runs unbounded here.
// The plugin runs in this process's cgroups, so it gets what this process
// would.
func requireBounds(t *testing.T, bounds ...string) {
	t.Helper()
	for _, e := range cgroup.Enforcements() {
		for _, b := range bounds {
			if e.Bound == b && e.Via == "" {
				t.Skipf("the %s bound is missing here, commands run without it: %s", b, e.Why)
			}
		}
	}
}

// commandGroup returns the cgroup v2 folder of the command that wrote its
// /proc/self/cgroup to file, "" when it wrote none.
func commandGroup(file string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	rel := ""
	for line := range strings.SplitSeq(string(b), "\n") {
		if r, ok := strings.CutPrefix(line, "0::"); ok {
			rel = r
		}
	}
	root, err := cgroup.Root() // <mount><this process's cgroup>/yagent.<pid>
	own, _ := os.ReadFile("/proc/self/cgroup")
	ownRel := ""
	for line := range strings.SplitSeq(string(own), "\n") {
		if r, ok := strings.CutPrefix(line, "0::"); ok {
			ownRel = r
		}
	}
	if rel == "" || err != nil {
		return ""
	}
	return filepath.Join(strings.TrimSuffix(filepath.Dir(root), strings.TrimSuffix(ownRel, "/")), rel)
}

// groupProcs lists the processes of the cgroup at dir.
func groupProcs(dir string) []int {
	b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	return pids
}

// emptied polls until the cgroup at dir holds no process, at most limit,
// and returns what is left.
func emptied(dir string, limit time.Duration) []int {
	deadline := time.Now().Add(limit)
	for {
		left := groupProcs(dir)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killGroupAtEnd kills, when t ends, whatever is left in the cgroup of
// the command that wrote its /proc/self/cgroup to file.
func killGroupAtEnd(t *testing.T, file string) {
	t.Cleanup(func() {
		dir := commandGroup(file)
		if dir == "" {
			return
		}
		for range 100 {
			if len(groupProcs(dir)) == 0 {
				return
			}
			os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// namesBound reports whether a result names the bound key (sandbox.pids,
// sandbox.memory_mb) with its value and what it refused, and lists it in
// bounds_hit.
func namesBound(r result, key string, value int, refused string) bool {
	short := strings.TrimPrefix(key, "sandbox.")
	return strings.Contains(r.Text, "("+key+": "+strconv.Itoa(value)+")") && strings.Contains(r.Text, refused) &&
		strings.Contains(string(r.Data), `"bounds_hit":["`+short+`"]`)
}

// TestDoorsBounds: under -y, with the profile bounding a command's tree to
// 64 processes and 128 MiB and the session's temp folder to 64 MiB, a
// fork bomb (`:(){ :|:& };:`), a memory filler and a /dev/shm filler are
// stopped at their bounds, and each result names the bound,
// its value and what it refused; nothing of the bomb outlives its call.
// The bomb runs only once a bomb that stops by itself has shown that the
// bound holds, so that a build that breaks it fails here without a
// machine full of processes.
func TestDoorsBounds(t *testing.T) {
	t.Parallel()
	requireBounds(t, cgroup.BoundPids, cgroup.BoundMemory)
	e := newEnv(t)
	e.write(filepath.Join(e.home, ".yagent", "config.yaml"), "sandbox: {pids: 64, memory_mb: 128, tmp_size_mb: 64}\n")
	c := e.serve("-y")

	t.Run("fork bomb", func(t *testing.T) {
		// 100 sleeps of a second, started at once: over 64, and over by
		// themselves. Only the loop's shell meets a refused fork; it
		// tries again after 1, 2, 4 and 8 s, and the sleeps it started
		// end after one. A tree of shells each retrying its own forks
		// held its slots for as long, and on a loaded machine outlasted
		// the call's 15 s.
		probe := sbRun(t, c, `for i in $(seq 100); do sleep 1 & done; wait; echo "all ended"`, 60000)
		if !namesBound(probe, "sandbox.pids", 64, "refused") {
			t.Fatalf("a bomb that stops by itself did not run into the process bound of 64, so the real one is not started: %s", clipResult(probe))
		}
		cg := e.ws("bomb-cgroup")
		killGroupAtEnd(t, cg)
		// The shell waits 2 s, so that the bomb reaches the bound before
		// its output goes quiet and the call reads the bounds.
		r := sbRun(t, c, `cat /proc/self/cgroup > bomb-cgroup; :(){ :|:& };:; sleep 2`, 60000)
		if !namesBound(r, "sandbox.pids", 64, "refused") {
			t.Errorf("the fork bomb's result does not name the process bound: %s", clipResult(r))
		}
		dir := commandGroup(cg)
		if dir == "" {
			t.Fatalf("the bomb did not write its cgroup: %s", clipResult(r))
		}
		if left := emptied(dir, 10*time.Second); len(left) > 0 {
			t.Errorf("%d processes of the fork bomb outlived its call (%v…)", len(left), left[:min(len(left), 5)])
		}
	})

	t.Run("/dev/shm filler", func(t *testing.T) {
		if err := sessiontmp.ProbeSize(t.TempDir()); err != nil {
			t.Skipf("no tmpfs for the session temp folders here: %v", err)
		}
		r := sbRun(t, c, `head -c 1G /dev/zero > /dev/shm/fill; echo "head exited with $?"; stat -c "fill holds %s bytes" /dev/shm/fill`, 60000)
		if !namesBound(r, "sandbox.tmp_size_mb", 64, "is full") || !strings.Contains(r.Text, "head exited with 1") {
			t.Errorf("the filler's result does not name the temp folder's size, or head did not fail: %s", clipResult(r))
		}
		if !strings.Contains(r.Text, "fill holds 67108864 bytes") {
			t.Errorf("the filler wrote other than the 64 MiB of the bound: %s", clipResult(r))
		}
		if !strings.Contains(sbRun(t, c, `rm /dev/shm/fill && echo removed`, 0).Text, "removed") {
			t.Error("the filler's file could not be removed")
		}
	})

	t.Run("memory filler", func(t *testing.T) {
		// tail keeps its last line, here all of its input: 1 GiB of zeros.
		r := sbRun(t, c, `head -c 1G /dev/zero | tail; echo "tail exited with $?"`, 60000)
		if !namesBound(r, "sandbox.memory_mb", 128, "the kernel killed 1 of its processes") || !strings.Contains(r.Text, "tail exited with 137") {
			t.Errorf("the memory filler's result does not name the memory bound, or tail was not killed: %s", clipResult(r))
		}
	})
}

// TestBenignBounds: under the built-in profile's bounds (4096 processes,
// 8 GiB a command), a go build of a small module and a command that
// starts 50 processes run as before, with no word about a bound.
func TestBenignBounds(t *testing.T) {
	t.Parallel()
	requireBounds(t, cgroup.BoundPids, cgroup.BoundMemory)
	cases := []struct {
		name  string
		need  []string
		env   func() []string
		files map[string]string
		cmd   string
		want  string
	}{
		{name: "go build of a small module", need: []string{"go"}, env: goCaches,
			files: map[string]string{"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello from the build\") }\n"},
			cmd:   "go mod init example.com/hello && go build -o hello . && ./hello", want: "hello from the build"},
		{name: "50 processes at once", cmd: `for i in $(seq 50); do sleep 1 & done; wait; echo "all 50 done"`, want: "all 50 done"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sbNeed(t, tc.need...)
			e := newEnv(t)
			if tc.env != nil {
				e.extraEnv = append(e.extraEnv, tc.env()...)
			}
			sbWriteFiles(t, e, ".", tc.files)
			c := e.serve()
			r := sbCallLong(t, c, tc.cmd, 300*time.Second)
			allowed(t, r, tc.want)
			if strings.Contains(r.Text, "(exit code") || strings.Contains(r.Text, "sandbox.pids") || strings.Contains(r.Text, "sandbox.memory_mb") {
				t.Errorf("%q failed or ran into a bound: %s", tc.cmd, r)
			}
		})
	}
}

// clipResult shows a result whose text may be long (a fork bomb's
// retries): its end.
func clipResult(r result) string {
	if len(r.Text) > 3000 {
		r.Text = "…" + r.Text[len(r.Text)-3000:]
	}
	return r.String() + " data=" + string(r.Data)
}
