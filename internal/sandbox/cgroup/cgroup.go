package cgroup

import "errors"

// Group is one command's cgroup.
type Group struct {
	// Path is the cgroup's folder.
	Path string
	fd   int
}

// ErrUnavailable says this machine has no writable cgroup v2: commands run
// in process groups only.
var ErrUnavailable = errors.New("no writable cgroup v2 here")

// Root returns the cgroup v2 folder under which this process makes
// command cgroups, or an error saying why there is none.
func Root() (string, error) { return "", ErrUnavailable }

// New makes a cgroup for one in-flight command; background says it
// belongs to a command that outlives its call (never killed with the
// plugin).
func New(background bool) (*Group, error) { return nil, ErrUnavailable }

// FD is the descriptor for SysProcAttr.UseCgroupFD/CgroupFD.
func (g *Group) FD() int { return g.fd }

// Kill kills every process in the group.
func (g *Group) Kill() error { return ErrUnavailable }

// Release lets the group go: it is never killed after this, and its
// folder is removed once empty.
func (g *Group) Release() {}
