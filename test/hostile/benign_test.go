package hostile

import (
	"testing"
)

// TestBenign: the work a user does every day runs without an ask, with no
// answerer attached and no -y.
func TestBenign(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(e *env)
		tool  string
		args  map[string]any
		want  []string
	}{
		{
			name:  "relative read",
			setup: func(e *env) { e.write("notes/a.txt", "hello notes\n") },
			tool:  "read_file", args: map[string]any{"path": "notes/a.txt"},
			want: []string{"hello notes"},
		},
		{
			name:  "grep in the workspace",
			setup: func(e *env) { e.write("src/main.go", "package main // needle\n") },
			tool:  "grep", args: map[string]any{"pattern": "needle", "path": "src"},
			want: []string{"main.go"},
		},
		{
			name:  "cat a relative file",
			setup: func(e *env) { e.write("a.txt", "plain words\n") },
			tool:  "run_bash", args: map[string]any{"command": "cat a.txt"},
			want: []string{"plain words"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			if tc.setup != nil {
				tc.setup(e)
			}
			c := e.serve()
			allowed(t, c.call(t, tc.tool, tc.args), tc.want...)
		})
	}
}
