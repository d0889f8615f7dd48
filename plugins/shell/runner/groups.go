package runner

import (
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/yagent/yagent/sdk/sandbox/cgroup"
)

// LiveGroups is the set of process groups of foreground commands in flight
// (running in a call, or yielded to a task). Background commands are never
// in it: they belong to the user. It is safe for concurrent use.
type LiveGroups struct {
	mu     sync.Mutex
	groups map[int]*liveGroup
}

type liveGroup struct {
	// cg is the command's cgroup, nil without one.
	cg *cgroup.Group
	// stopped is set when KillAll killed the group, so the receipt can say
	// who did it.
	stopped atomic.Bool
}

func (g *LiveGroups) register(pgid int, cg *cgroup.Group) *liveGroup {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.groups == nil {
		g.groups = make(map[int]*liveGroup)
	}
	e := &liveGroup{cg: cg}
	g.groups[pgid] = e
	return e
}

func (g *LiveGroups) unregister(pgid int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.groups, pgid)
}

// KillAll kills every registered group, its cgroup whole (cgroup.kill)
// and its process group (SIGKILL), and returns how many it reached.
// Entries stay until their command's wait ends and unregisters them.
func (g *LiveGroups) KillAll() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for pgid, e := range g.groups {
		e.stopped.Store(true)
		killed := e.cg != nil && e.cg.Kill() == nil
		if err := syscall.Kill(-pgid, syscall.SIGKILL); err == nil || killed {
			n++
		}
	}
	return n
}
