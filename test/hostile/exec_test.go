package hostile

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// execConfig writes the user's config with the given exec rules (YAML
// flow maps, one a line).
func execConfig(e *env, rules ...string) {
	e.t.Helper()
	s := "exec:\n  rules:\n"
	for _, r := range rules {
		s += "    - " + r + "\n"
	}
	e.write(filepath.Join(e.home, ".yagent", "config.yaml"), s)
}

// execPrintenv is the host's printenv, resolved.
func execPrintenv(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("printenv")
	if err != nil {
		t.Skip("no printenv on PATH")
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// execCopy copies the file src to dst, executable.
func execCopy(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestExecRulesMatchPrograms: with the user's deny rules on printenv and
// on rm -rf, under -y, no spelling, wrapper, path, link or copy of the
// program runs it: every call is denied and the variable printenv would
// show stays hidden, the file rm would remove stays.
func TestExecRulesMatchPrograms(t *testing.T) {
	t.Parallel()
	pe := execPrintenv(t)
	cases := []struct {
		name   string
		cmd    string
		victim string // a workspace file the command must not remove
	}{
		{name: "bash -c --", cmd: "bash -c -- 'printenv X'"},
		{name: "bash -c -e", cmd: "bash -c -e 'printenv X'"},
		{name: "bash -c -x", cmd: "bash -c -x 'printenv X'"},
		{name: "bash -ce --", cmd: "bash -ce -- 'printenv X'"},
		{name: "sh -c --", cmd: "sh -c -- 'printenv X'"},
		{name: "hash -p", cmd: "hash -p /usr/bin/printenv pe; pe X"},
		{name: "hash -p resolved", cmd: "hash -p " + pe + " zz; zz X"},
		{name: "taskset -c", cmd: "taskset -c 0 printenv X"},
		{name: "taskset mask", cmd: "taskset 0x1 printenv X"},
		{name: "flock file command", cmd: "flock ./lk printenv X"},
		{name: "flock -c", cmd: "flock ./lk2 -c 'printenv X'"},
		{name: "script -qc", cmd: "script -qc 'printenv X' /dev/null"},
		{name: "script -q -c", cmd: "script -q -c 'printenv X' /dev/null"},
		{name: "chrt", cmd: "chrt -o 0 printenv X"},
		{name: "su -c", cmd: "su -c 'printenv X'"},
		{name: "chroot", cmd: "chroot / printenv X"},
		{name: "strace", cmd: "strace -f -o /dev/null printenv X"},
		{name: "parallel", cmd: "parallel printenv ::: X"},
		{name: "renamed copy", cmd: "cp /usr/bin/printenv ./pe && ./pe X"},
		{name: "copy by cat", cmd: "cat " + pe + " > pe4; chmod +x pe4; ./pe4 X"},
		{name: "copy by install", cmd: "install " + pe + " pe5 && ./pe5 X"},
		{name: "copy of a name found at run time", cmd: "cp \"$(command -v printenv)\" pe6 && ./pe6 X"},
		{name: "symlink made by the command", cmd: "ln -s " + pe + " pe2; ./pe2 X"},
		{name: "symlink in the workspace", cmd: "./pel X"},
		{name: "hard link in the workspace", cmd: "./hl X"},
		{name: "copy made by an earlier call", cmd: "./pecopy X"},
		{name: "copy found on a PATH the command sets", cmd: "PATH=.:$PATH pecopy X"},
		{name: "script file", cmd: "bash leak.sh"},
		{name: "sourced script", cmd: "source leak.sh"},
		{name: "shebang script", cmd: "./leak"},
		{name: "script written by the command", cmd: "echo 'printenv X' > gen.sh; bash gen.sh"},
		{name: "syntax error after the first line", cmd: "printenv X\n)"},
		{name: "rm -fr", cmd: "rm -fr v1", victim: "v1/keep.txt"},
		{name: "rm -r -f", cmd: "rm -r -f v2", victim: "v2/keep.txt"},
		{name: "rm --recursive --force", cmd: "rm --recursive --force v3", victim: "v3/keep.txt"},
		{name: "rm -rfv", cmd: "rm -rfv v4", victim: "v4/keep.txt"},
		{name: "rm permuted", cmd: "rm v5 -rf", victim: "v5/keep.txt"},
		{name: "rm -R -f", cmd: "rm -R -f v6", victim: "v6/keep.txt"},
		{name: "rm abbreviated", cmd: "rm --rec --force v7", victim: "v7/keep.txt"},
		{name: "rm line before a syntax error", cmd: "rm -rf v8\n)", victim: "v8/keep.txt"},
		{name: "rm victim before a syntax error", cmd: "rm v9\n)", victim: "v9"},
	}
	e := newEnv(t)
	marker := e.secret("unused")
	e.extraEnv = []string{"X=" + marker}
	// A copy of printenv in a folder on PATH, so the workspace can hold a
	// hard link of it (a link to /usr/bin may cross filesystems).
	bin := filepath.Join(e.root, "bin")
	execCopy(t, pe, filepath.Join(bin, "printenv"))
	e.extraEnv = append(e.extraEnv, "PATH="+bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
	if err := os.Link(filepath.Join(bin, "printenv"), e.ws("hl")); err != nil {
		t.Fatal(err)
	}
	e.symlink(pe, "pel")
	execCopy(t, pe, e.ws("pecopy"))
	e.write("leak.sh", "echo start\nprintenv X\n")
	e.write("leak", "#!/bin/sh\nprintenv X\n")
	if err := os.Chmod(e.ws("leak"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		if tc.victim != "" {
			e.write(tc.victim, "keep\n")
		}
	}
	execConfig(e, "{action: deny, program: printenv}", "{action: deny, program: rm, args: [-rf]}")
	c := e.serve("-y")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			denied(t, c.call(t, "run_bash", map[string]any{"command": tc.cmd, "timeout_ms": 10000}), marker)
			if tc.victim != "" {
				if _, err := os.Stat(e.ws(tc.victim)); err != nil {
					t.Errorf("the command removed %s: %v", tc.victim, err)
				}
			}
		})
	}
}
