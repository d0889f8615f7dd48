package runner

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/yagent/yagent/plugins/shell/output"
	"github.com/yagent/yagent/sdk"
)

// endResult reports how a task ended with the output not yet seen, and
// drops the task from its session: its end has been told.
func (m *Manager) endResult(t *task, lead string) *sdk.Result {
	c := t.readNew(m.opts.MaxOutputBytes)
	m.release(t)
	d := t.data(t.end.kind, c)
	text := m.endHeadline(t)
	if lead != "" {
		text = lead + "\n" + text
	}
	text += "\n" + body(c, "(no new output)")
	if note := t.taskSandboxNotes(c.Text()); note != "" {
		text = withStatus(text, note)
	}
	if note := t.boundNotes(); note != "" {
		text = withStatus(text, note)
	}
	return &sdk.Result{Text: text, Data: d}
}

// runningResult reports a task still running, with its diagnosis and the
// output not yet seen.
func (m *Manager) runningResult(t *task, lead string) *sdk.Result {
	c := t.readNew(m.opts.MaxOutputBytes)
	d := t.data("running", c)
	var diag string
	if t.mode == modeBackground {
		diag = fmt.Sprintf("It runs in the background; its whole log is %s. Stop it with shell_cancel.", t.logPath)
	} else {
		dg := diagnose(t, t.peekTail())
		d.Diagnosis = dg.Kind
		diag = dg.Text
	}
	text := fmt.Sprintf("%s\n%s\nNew output:\n%s", lead, diag, body(c, "(no new output)"))
	if note := t.taskSandboxNotes(c.Text()); note != "" {
		text = withStatus(text, note)
	}
	return &sdk.Result{Text: text, Data: d}
}

// Wait waits for a task of the call's session to end, at most timeout
// (0 means DefaultWaitTimeout; at most MaxWaitTimeout), and returns the
// output it wrote since it was last read. A terminal task that sits silent
// at a prompt for PromptQuiet ends the wait early, since only input will
// move it. Cancelling the call ends the wait, not the task.
func (m *Manager) Wait(ctx context.Context, id string, timeout time.Duration) (*sdk.Result, error) {
	t, err := m.lookup(ctx, id)
	if err != nil {
		return nil, err
	}
	if timeout < 0 {
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "timeout_ms must be positive; leave it out to wait up to %s", DefaultWaitTimeout)
	}
	timeout = min(cmp(timeout, DefaultWaitTimeout), MaxWaitTimeout)
	defer t.sb.attach(ctx)() // an exec of the task asks through this call
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	quiet := time.NewTimer(m.opts.PromptQuiet)
	defer quiet.Stop()
	for {
		changed := t.changed()
		select {
		case <-t.done:
			return m.endResult(t, ""), nil
		case <-deadline.C:
			return m.runningResult(t, fmt.Sprintf("Task %s is still running after waiting %s.", t.id, timeout)), nil
		case <-ctx.Done():
			return nil, sdk.Errorf(sdk.CodeCancelled, "shell_wait was cancelled; task %s goes on running (shell_cancel stops it)", t.id)
		case <-changed:
			quiet.Reset(m.opts.PromptQuiet)
		case <-quiet.C:
			if t.mode != modeBackground {
				if dg := diagnose(t, t.peekTail()); dg.Kind == DiagPrompt || dg.Kind == DiagStopped {
					return m.runningResult(t, fmt.Sprintf("Task %s is waiting for input.", t.id)), nil
				}
			}
		}
	}
}

// keySequences are the keys write_stdin can press, as a terminal sends them.
var keySequences = map[string]string{
	"enter": "\r", "tab": "\t", "esc": "\x1b", "ctrl-c": "\x03", "ctrl-d": "\x04",
	"up": "\x1b[A", "down": "\x1b[B", "right": "\x1b[C", "left": "\x1b[D",
	"backspace": "\x7f", "space": " ",
}

// KeyNames lists the keys write_stdin accepts.
var KeyNames = []string{"enter", "tab", "esc", "ctrl-c", "ctrl-d", "up", "down", "left", "right", "backspace", "space"}

func normalizeKey(k string) string {
	k = strings.ToLower(strings.TrimSpace(k))
	k = strings.ReplaceAll(k, "+", "-")
	switch k {
	case "return", "\n", "\r":
		return "enter"
	case "escape":
		return "esc"
	case "control-c", "^c":
		return "ctrl-c"
	case "control-d", "^d":
		return "ctrl-d"
	}
	return k
}

// WriteStdin types input and then presses keys in a terminal task, waits
// for its output to settle, and returns what it wrote since it was last
// read. The host approves first what the task's foreground program will
// read (approveStdin); nothing is typed before its answer. A pipe-mode task
// has no stdin to write (it is /dev/null); only ctrl-c reaches it, as
// SIGINT to its process group.
func (m *Manager) WriteStdin(ctx context.Context, id, input string, keys []string) (*sdk.Result, error) {
	t, err := m.lookup(ctx, id)
	if err != nil {
		return nil, err
	}
	t.stdin.Lock()
	defer t.stdin.Unlock()
	defer t.sb.attach(ctx)()
	var seq strings.Builder
	seq.WriteString(input)
	onlyCtrlC := input == "" && len(keys) > 0
	for _, k := range keys {
		name := normalizeKey(k)
		s, ok := keySequences[name]
		if !ok {
			return nil, sdk.Errorf(sdk.CodeInvalidInput, "key %q is not one write_stdin knows: use one of %s, or send text with input", k, strings.Join(KeyNames, ", "))
		}
		onlyCtrlC = onlyCtrlC && name == "ctrl-c"
		seq.WriteString(s)
	}
	if seq.Len() == 0 {
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "nothing to write: pass input text, keys, or both (to only read new output, use shell_wait)")
	}
	if t.finished() {
		return m.endResult(t, "Nothing was written: the task had already ended."), nil
	}
	switch t.mode {
	case modeBackground:
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "task %s runs in the background with no stdin: it cannot be written to. Read its log with shell_wait and stop it with shell_cancel", t.id)
	case ModePipe:
		if !onlyCtrlC {
			return nil, sdk.Errorf(sdk.CodeInvalidInput, "task %s runs without a terminal: its stdin is empty (/dev/null) and cannot be written (only keys [\"ctrl-c\"] reach it, as an interrupt). "+
				"Stop it with shell_cancel and run it again with mode=pty to interact with it", t.id)
		}
		if err := syscall.Kill(-t.pgid, syscall.SIGINT); err != nil && !t.finished() {
			return nil, fmt.Errorf("write_stdin: interrupt task %s: %w", t.id, err)
		}
	default:
		next, err := m.approveStdin(ctx, t, input, keys)
		if err != nil {
			return nil, err
		}
		if err := t.writeMaster([]byte(seq.String())); err != nil {
			if t.finished() {
				return m.endResult(t, "Nothing was written: the task had already ended."), nil
			}
			return nil, fmt.Errorf("write_stdin: task %s: %w", t.id, err)
		}
		t.line, t.ahead = next.line, next.ahead
	}

	// Wait for the answer: until the output has been quiet for StdinSettle,
	// the task ends, or StdinMaxWait passes.
	limit := time.NewTimer(m.opts.StdinMaxWait)
	defer limit.Stop()
	settle := time.NewTimer(m.opts.StdinSettle)
	defer settle.Stop()
	lead := fmt.Sprintf("Wrote %d bytes to task %s.", seq.Len(), t.id)
	for {
		changed := t.changed()
		select {
		case <-t.done:
			return m.endResult(t, lead), nil
		case <-changed:
			settle.Reset(m.opts.StdinSettle)
		case <-settle.C:
			return m.runningResult(t, lead+" It is still running."), nil
		case <-limit.C:
			return m.runningResult(t, lead+" It is still running."), nil
		case <-ctx.Done():
			return m.runningResult(t, lead+" It is still running."), nil
		}
	}
}

// Cancel stops a task of the call's session and reports how it ended. A
// foreground task's cgroup and group get SIGKILL through its context; a
// background task's processes get SIGTERM (its group, and every process of
// its cgroup), then after CancelGrace SIGKILL and cgroup.kill.
func (m *Manager) Cancel(ctx context.Context, id string) (*sdk.Result, error) {
	t, err := m.lookup(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.finished() {
		return m.endResult(t, "The task had already ended; nothing was stopped."), nil
	}
	if t.mode != modeBackground {
		t.cancel(errShellCancel)
		select {
		case <-t.done:
		case <-ctx.Done():
			return nil, sdk.Errorf(sdk.CodeCancelled, "shell_cancel was cancelled while task %s was being stopped; its group was killed, check with shell_tasks", t.id)
		}
		return m.endResult(t, ""), nil
	}
	t.mu.Lock()
	t.cancelling = true
	t.mu.Unlock()
	// The wait goroutine leaves the cgroup to this function once it is
	// cancelling: killed whole first, then let go.
	defer t.releaseGroup()
	_ = syscall.Kill(-t.pgid, syscall.SIGTERM)
	g := t.group()
	if g != nil {
		g.Signal(syscall.SIGTERM)
	}
	grace := time.NewTimer(m.opts.CancelGrace)
	defer grace.Stop()
	select {
	case <-t.done:
	case <-grace.C:
	case <-ctx.Done():
	}
	// Whatever of its group is left (the leader may have gone first), and
	// of its cgroup: the setsid and double-forked ones.
	if g != nil {
		_ = g.Kill()
	}
	_ = syscall.Kill(-t.pgid, syscall.SIGKILL)
	select {
	case <-t.done:
	case <-ctx.Done():
		return nil, sdk.Errorf(sdk.CodeCancelled, "shell_cancel was cancelled while background task %s was being stopped; check with shell_tasks", t.id)
	}
	return m.endResult(t, ""), nil
}

// TaskInfo describes one task for shell_tasks.
type TaskInfo struct {
	TaskID      string `json:"task_id"`
	Mode        string `json:"mode"`
	Status      string `json:"status"`
	ExitCode    *int   `json:"exit_code,omitempty"`
	Command     string `json:"command"`
	PID         int    `json:"pid"`
	ElapsedMS   int64  `json:"elapsed_ms"`
	UnreadBytes int64  `json:"unread_bytes"`
	LogPath     string `json:"log_path,omitempty"`
	// Cgroup is the folder of the task's cgroup, empty when it runs in its
	// process group only; Processes is how many processes are in it now.
	Cgroup    string `json:"cgroup,omitempty"`
	Processes *int   `json:"processes,omitempty"`
}

// Tasks lists the tasks of the call's session.
func (m *Manager) Tasks(ctx context.Context) (*sdk.Result, error) {
	tasks := m.sessionTasks(sdk.CallFrom(ctx).SessionID)
	infos := make([]TaskInfo, 0, len(tasks))
	var sb strings.Builder
	if len(tasks) == 0 {
		sb.WriteString("No shell tasks in this session.")
	}
	for _, t := range tasks {
		d := t.data("running", output.Chunk{})
		if t.finished() {
			d.Status = t.end.kind
		}
		t.mu.Lock()
		unread := d.OutputBytes - t.readOff
		t.mu.Unlock()
		info := TaskInfo{TaskID: t.id, Mode: t.mode, Status: d.Status, ExitCode: d.ExitCode, Command: clip(t.command, 200),
			PID: t.pid, ElapsedMS: d.ElapsedMS, UnreadBytes: max(0, unread), LogPath: t.logPath}
		group := ""
		if g := t.group(); g != nil && !t.finished() {
			n := g.Procs()
			info.Cgroup, info.Processes = g.Dir(), &n
			group = fmt.Sprintf("  cgroup %s (%s)", g.Name(), plural(n, "process", "processes"))
		}
		infos = append(infos, info)
		status := info.Status
		if info.ExitCode != nil {
			status = fmt.Sprintf("%s %d", status, *info.ExitCode)
		}
		fmt.Fprintf(&sb, "%s  %-10s  %-12s  pid %d  %s  %d bytes unread%s  %s\n", info.TaskID, info.Mode, status, info.PID,
			(time.Duration(info.ElapsedMS) * time.Millisecond).Round(time.Second), info.UnreadBytes, group, clip(strings.ReplaceAll(t.command, "\n", " "), 80))
	}
	return &sdk.Result{Text: sb.String(), Data: infos}, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
