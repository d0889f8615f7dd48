//go:build !linux

package cgroup

import (
	"fmt"
	"syscall"
)

type tree struct{}

var std = &tree{}

func (*tree) rootDir() (string, error) {
	return "", fmt.Errorf("%w: cgroups are a Linux kernel layer; run yagent in a Linux VM or container to have them", ErrUnavailable)
}

func (t *tree) newGroup(bool) (*Group, error) {
	_, err := t.rootDir()
	return nil, err
}

func (*tree) cleanup() {}

func (g *Group) kill() error           { return ErrUnavailable }
func (g *Group) signal(syscall.Signal) {}
func (g *Group) procs() int            { return 0 }
func (g *Group) release()              {}
func dirOf(int) (string, error)        { return std.rootDir() }
func killLive(string) (int, error)     { return 0, nil }
func removeEmpty(string) bool          { return true }
func released(string) bool             { return false }
func groupOf(int) (string, error)      { return std.rootDir() }

func (*tree) enforcements() []Enforcement {
	var out []Enforcement
	for _, b := range bounds {
		out = append(out, Enforcement{Bound: b, Why: "cgroups are a Linux kernel layer; run yagent in a Linux VM or container to have them"})
	}
	return out
}

func (g *Group) bound(Limits) error          { return ErrUnavailable }
func (g *Group) joinThread() (func(), error) { return func() {}, nil }
func (g *Group) hits() Hits                  { return Hits{} }
