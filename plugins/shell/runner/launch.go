package runner

import (
	"context"
	"os/exec"
)

// launch starts cmd, the process of task t: every command of the plugin
// (pipe, terminal, background) starts here.
func (m *Manager) launch(ctx context.Context, t *task, cmd *exec.Cmd) error {
	return m.confine(ctx, t, cmd)
}
