package runner

import (
	"fmt"
	"strings"

	"github.com/yagent/yagent/internal/sessiontmp"
	"github.com/yagent/yagent/sdk/sandbox/cgroup"
)

// bound sets the bounds of c, the call's sandbox, on g, the command's
// cgroup, and has the thread that starts the command join the cgroup v1
// groups they may need (sandbox.Policy.Join): the command is born inside
// every bound. A bound that cannot be set is logged once; the command
// runs without it, as where the machine lacks it (yagent doctor says so).
func (m *Manager) bound(g *cgroup.Group, c *confinement) {
	if err := g.Bound(cgroup.Limits{Pids: c.policy.Pids, MemoryMB: c.policy.MemoryMB}); err != nil {
		m.noBound.Do(func() {
			m.opts.Logger.Warn("shell: a bound of the sandbox could not be set on a command's cgroup; commands run without it", "err", err)
		})
	}
	c.policy.Join = g.JoinThread
}

// boundsHit is what the bounds of a command's cgroup refused, read as the
// command ended, and how many of its processes were left then; and
// whether the session temp folder was full then (sandbox.tmp_size_mb).
type boundsHit struct {
	cgroup.Hits
	left    int
	tmpFull bool
}

// any says the command ran into a bound.
func (h boundsHit) any() bool { return h.Any() || h.tmpFull }

// checkBounds reads, as t's command ends and before its cgroup is let go,
// what the cgroup's bounds refused. A tree that ran into one is killed
// whole: what it left (a fork bomb's survivors, retrying forks at the
// bound) does not run on, at the bound, in a group no one kills. Said in
// the result by boundNotes.
func (m *Manager) checkBounds(t *task) {
	if c := t.sb; c != nil && c.policy.TmpSizeMB > 0 && c.policy.Tmp != "" {
		_, t.hit.tmpFull, _ = sessiontmp.Free(c.policy.Tmp)
	}
	g := t.group()
	if g == nil {
		return
	}
	h := g.Hits()
	if !h.Any() {
		return
	}
	t.hit.Hits, t.hit.left = h, g.Procs()
	if err := g.Kill(); err != nil {
		m.opts.Logger.Warn("shell: killing what a command that ran into a bound left", "task", t.id, "err", err)
	}
}

// boundNames are the bounds t's command ran into, for Data.BoundsHit.
func (t *task) boundNames() []string {
	var names []string
	if t.hit.Forks > 0 {
		names = append(names, "pids")
	}
	if t.hit.OOMKills > 0 {
		names = append(names, "memory_mb")
	}
	if t.hit.tmpFull {
		names = append(names, "tmp_size_mb")
	}
	return names
}

// boundNotes says which bound of the sandbox t's command ran into, what
// it refused and what to do: one line each, "" when none.
func (t *task) boundNotes() string {
	h := t.hit
	if !h.any() || t.sb == nil {
		return ""
	}
	p := t.sb.policy
	var notes []string
	if h.Forks > 0 {
		notes = append(notes, fmt.Sprintf(notePrefix+"the sandbox's process limit (sandbox.pids: %d) refused %s: "+
			"a command's processes and threads may number %d at once. If the command needs more (a parallel build), "+
			"run fewer jobs at once (make -j4, go build -p 2), or ask the user to raise sandbox.pids in the profile.",
			p.Pids, plural(h.Forks, "fork (a new process or thread)", "forks (new processes or threads)"), p.Pids))
	}
	if h.OOMKills > 0 {
		notes = append(notes, fmt.Sprintf(notePrefix+"the command ran out of the sandbox's memory (sandbox.memory_mb: %d): "+
			"the kernel killed %d of its processes (SIGKILL) at the bound of %d MiB for all of them. If the command needs more, "+
			"have it use less at once (fewer parallel jobs, smaller inputs), or ask the user to raise sandbox.memory_mb in the profile.",
			p.MemoryMB, h.OOMKills, p.MemoryMB))
	}
	if h.tmpFull {
		notes = append(notes, fmt.Sprintf(notePrefix+"the session's temp folder (/tmp, /var/tmp, /dev/shm and $TMPDIR of its commands) is full at its size (sandbox.tmp_size_mb: %d): "+
			"it holds %d MiB, and writes there fail with \"No space left on device\". Remove what the session no longer "+
			"needs there (rm -rf /tmp/...), write big files in the workspace instead, or ask the user to raise sandbox.tmp_size_mb in the profile.",
			p.TmpSizeMB, p.TmpSizeMB))
	}
	if h.left > 0 {
		notes = append(notes, fmt.Sprintf(notePrefix+"the %s the command left running %s killed with it, since it ran into a bound.",
			plural(h.left, "process", "processes"), word(h.left, "was", "were")))
	}
	return strings.Join(notes, "\n")
}

// word is one or many, as n says.
func word(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
