package runner

import (
	"context"
	"strings"
	"time"
)

// Output is what a call waiting on a command sees of it while it runs,
// enough to tell the client how far it got: the lines so far, the last
// one, how long it has run.
type Output struct {
	t *task
}

// ID returns the task id the command has (or will have, once it yields).
func (o Output) ID() string { return o.t.id }

// Started returns when the command started.
func (o Output) Started() time.Time { return o.t.started }

// Lines returns how many lines the command wrote so far, -1 when that is
// not counted (a background command, whose output goes to a file).
func (o Output) Lines() int64 {
	if o.t.out == nil {
		return -1
	}
	return o.t.out.Lines()
}

// LastLine returns the last non-blank line of output, sanitized as the
// output is and trimmed, "" when there is none.
func (o Output) LastLine() string {
	tail := o.t.peekTail()
	for tail != "" {
		i := strings.LastIndexByte(tail, '\n')
		if line := strings.TrimSpace(tail[i+1:]); line != "" {
			return line
		}
		if i < 0 {
			break
		}
		tail = tail[:i]
	}
	return ""
}

// Watch follows a command while a call waits on it; the function it
// returns stops following and returns only once nothing more is reported.
type Watch func(Output) (stop func())

// Output returns the running output of a task of the call's session, for
// a call about to wait on it (shell_wait, write_stdin).
func (m *Manager) Output(ctx context.Context, id string) (Output, bool) {
	t, err := m.lookup(ctx, id)
	if err != nil || t.finished() {
		return Output{}, false
	}
	return Output{t: t}, true
}
