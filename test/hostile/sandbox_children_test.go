package hostile

import (
	"strings"
	"testing"
	"time"
)

// TestSandboxEscapingChildren: children that leave their command's
// process group or session die with the call when it times out: each
// command and its tree share one cgroup, killed whole. Each child writes
// its pid (it then execs sleep 300) to a workspace file first.
func TestSandboxEscapingChildren(t *testing.T) {
	t.Parallel()
	const child = `sh -c 'echo $$ > PID; exec sleep 300'`
	cases := []struct {
		name string
		need []string
		cmd  string // PID is the child's pid file
	}{
		{name: "setsid", cmd: "setsid " + child + " & sleep 30"},
		{name: "setsid -f", cmd: "setsid -f " + child + "; sleep 30"},
		{name: "set -m", cmd: "set -m; " + child + " & sleep 30"},
		// A plain double fork or nohup stays in the command's process
		// group, which the timeout already kills; these leave it.
		{name: "nohup in its own job", cmd: "set -m; nohup " + child + " >/dev/null 2>&1 & sleep 30"},
		{name: "double fork with setsid (a daemon)", need: []string{"python3"},
			cmd: `python3 -c "import os,sys
if os.fork(): sys.exit()
os.setsid()
if os.fork(): sys.exit()
open('PID','w').write(str(os.getpid())); os.execvp('sleep', ['sleep', '300'])"; sleep 30`},
	}
	e := newEnv(t)
	c := e.serve("-y")
	for i, tc := range cases {
		pidFile := "pid-" + string(rune('a'+i))
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sbNeed(t, tc.need...)
			r := sbRun(t, c, strings.ReplaceAll(tc.cmd, "PID", pidFile), 1500)
			pid, ok := sbPid(e.ws(pidFile), 5*time.Second)
			if !ok {
				t.Fatalf("the child wrote no pid to %s: %s", pidFile, r)
			}
			t.Cleanup(func() { sbKill(pid, "sleep 300") })
			if !strings.Contains(strings.ToLower(sbText(r)), "timed out") && !strings.Contains(strings.ToLower(sbText(r)), "timeout") {
				t.Logf("the result does not say the call timed out: %s", r)
			}
			if !sbGone(pid, "sleep 300", 5*time.Second) {
				t.Errorf("child %d outlived its timed-out call: %s", pid, r)
			}
		})
	}
}
