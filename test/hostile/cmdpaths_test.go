package hostile

import (
	"testing"
)

// TestCommandPathsAsKernel: a command's paths are judged as the kernel
// will resolve them, with nobody to answer and no -y: with ws/e a symlink
// to a folder outside and ws/etcl one to its parent, "e/.." is that
// parent (symlinks before ".."), cd -P follows, a glob is every match.
// Each call must be stopped before it runs, the outside file unread.
func TestCommandPathsAsKernel(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, cmd string }{
		{"dotdot after a symlink", "cat e/../secret"},
		{"dot slash, dotdot after a symlink", "cat ./e/../secret"},
		{"dotdot twice", "cat sub/../e/../secret"},
		{"grep through dotdot", "grep -r SECRET e/.."},
		{"copy through dotdot", "cp e/../secret c.txt && cat c.txt"},
		{"cd -P then a relative name", "cd -P e/.. && cat secret"},
		{"cd -P dot slash", "cd -P ./e/.. ; head -1 secret"},
		{"cd to a folder known at run time", "D=e/..; cd -P $D && cat secret"},
		{"glob through a symlink", "cat etcl*/secret"},
		{"glob of one character", "cat etc?/secret"},
		{"glob of a leading character", "cat ?tcl/secret"},
		{"glob then dotdot", "cat e*/../secret"},
		{"bare star", "cat */secret"},
		{"system file through dotdot", "cat s/../passwd"},
		{"system file by a glob", "cat s*/../hostname"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			marker := e.secret("secret")
			e.write(e.outside+"/deep/x", "x\n")
			e.symlink(e.outside+"/deep", "e")
			e.symlink(e.outside, "etcl")
			e.symlink("/etc/ssl", "s")
			e.write("sub/f.txt", "f\n")
			c := e.serve()
			blocked(t, c.call(t, "run_bash", map[string]any{"command": tc.cmd}), marker)
		})
	}
}
