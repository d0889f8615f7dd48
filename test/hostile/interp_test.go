package hostile

import (
	"testing"
)

// TestInterpreterStartAsks: the built-in coder profile, with nobody to
// answer and no -y, asks before an interpreter starts interactively: once
// it runs, what write_stdin types into it reaches no rule.
func TestInterpreterStartAsks(t *testing.T) {
	t.Parallel()
	cases := []string{
		"python3 -q -i",
		"python3",
		"python3 -i",
		"python3 -",
		"env python3 -q",
		"node",
		"node -i",
		"perl -de0",
		"php -a",
		"sqlite3 db.sqlite",
		"irb",
		"lua",
		"psql",
		"gdb -q",
		"python3 -c 'while 1: exec(input())'",
		"python3 -m code",
		"uv run python3 -i",
	}
	for _, cmd := range cases {
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			c := e.serve()
			blocked(t, c.call(t, "run_bash", map[string]any{"command": cmd, "mode": "pty", "yield_time_ms": 500, "timeout_ms": 3000}))
		})
	}
}
