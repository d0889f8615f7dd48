package runner

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"

	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/sandbox"
	"github.com/yagent/yagent/sdk/sandbox/cgroup"
)

// launch starts cmd, the process of task t: every command of the plugin
// (pipe, terminal, background) starts here. Under a sandbox that is not
// off, cmd is born in a cgroup of its own (live-N, bg-N for a background
// command: CLONE_INTO_CGROUP, so no child escapes before it is in), kept in
// t.cg, which bounds its tree as the call's sandbox says (sandbox.pids,
// memory_mb); without a writable cgroup v2 the command runs in its process
// group only, unbounded, unless the call's sandbox is required.
func (m *Manager) launch(ctx context.Context, t *task, cmd *exec.Cmd) error {
	c, err := m.plan(ctx, t, cmd.Env)
	if err != nil {
		return err
	}
	g, err := m.cgroupFor(ctx, t)
	if err != nil {
		return err
	}
	if g != nil {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		bornIn(cmd.SysProcAttr, g.FD())
		t.setGroup(g)
		if c != nil {
			m.bound(g, c)
		}
	}
	if err := m.confine(t, cmd, c); err != nil {
		if g != nil {
			g.Release()
			t.setGroup(nil)
			return fmt.Errorf("%w (starting it in cgroup %s)", err, g.Path)
		}
		return err
	}
	return nil
}

// cgroupFor makes t's cgroup; nil with no error when the call's sandbox
// is off or the machine has no writable cgroup v2.
func (m *Manager) cgroupFor(ctx context.Context, t *task) (*cgroup.Group, error) {
	sb := sdk.CallFrom(ctx).Sandbox
	if sb == nil || policy.SandboxMode(sb.Mode) == policy.SandboxOff {
		return nil, nil // docs/ARCHITECTURE.md#sandbox-off: process groups
	}
	g, err := m.opts.NewCgroup(t.mode == modeBackground)
	if err == nil {
		return g, nil
	}
	if sb.Mode == sdk.SandboxRequired {
		return nil, &sandbox.RequiredError{Missing: map[string]string{
			sandbox.LayerCgroup: fmt.Sprintf("commands cannot get a cgroup of their own here (%v), so a setsid child of a timed-out command would live on", err),
		}}
	}
	m.noCgroup.Do(func() {
		m.opts.Logger.Warn("shell: commands run in process groups only: a command's setsid or daemonized children can outlive its timeout", "err", err)
	})
	return nil, nil
}

// killTree is the Cancel of a foreground command: cgroup.kill of its
// cgroup, which reaches every process it started (setsid and
// double-forked ones too), and SIGKILL to its process group, which is all
// there is without a cgroup.
func killTree(t *task, cmd *exec.Cmd) func() error {
	return func() error {
		if g := t.group(); g != nil {
			_ = g.Kill() // the group kill below still lands
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// releaseGroup lets t's cgroup go: what is left in it lives on, never
// killed later (`nohup server &`).
func (t *task) releaseGroup() {
	if g := t.group(); g != nil {
		g.Release()
	}
}

// group is t's cgroup, nil without one. A background task is in its
// session's table (shell_tasks, shell_cancel) before it starts, hence the
// lock.
func (t *task) group() *cgroup.Group {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cg
}

func (t *task) setGroup(g *cgroup.Group) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cg = g
}
