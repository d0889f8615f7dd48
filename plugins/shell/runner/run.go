package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/yagent/yagent/internal/sessiontmp"
	"github.com/yagent/yagent/plugins/shell/output"
	"github.com/yagent/yagent/sdk"
)

// RunRequest is one run_bash call.
type RunRequest struct {
	Command string
	// Background starts the command outside the call (see the package
	// documentation).
	Background bool
	// Timeout kills a foreground command's group; 0 means DefaultTimeout.
	Timeout time.Duration
	// Yield is how long the call waits before the command goes on as a
	// task; 0 means DefaultYield, or ServerYield for servers and watchers.
	Yield time.Duration
	// Mode is auto (""), pipe or pty.
	Mode string
	// Watch, when set, follows a foreground command from its start until
	// the call returns; it is stopped before Run returns.
	Watch Watch
}

// terminalSize is the window of a PTY: wide, so lines rarely wrap.
var terminalSize = pty.Winsize{Rows: 40, Cols: 160}

// Run runs one run_bash call in the call's workspace root.
func (m *Manager) Run(ctx context.Context, req RunRequest) (*sdk.Result, error) {
	info := sdk.CallFrom(ctx)
	if strings.TrimSpace(req.Command) == "" {
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "command is empty: pass the bash command line to run")
	}
	if req.Timeout < 0 || req.Yield < 0 {
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "timeout_ms and yield_time_ms must be positive; leave them out for the defaults (%s and %s)", DefaultTimeout, DefaultYield)
	}
	if info.Workspace == "" {
		return nil, errors.New("run_bash: the call carries no workspace root")
	}
	m.noteTemp(info)
	mode, err := resolveMode(req.Mode, req.Command)
	if err != nil {
		return nil, err
	}
	if req.Background {
		if mode == ModePTY && req.Mode == ModePTY {
			return nil, sdk.Errorf(sdk.CodeInvalidInput, "a background command has no terminal: leave mode out with is_background=true, or run it in the foreground with mode=pty")
		}
		return m.runBackground(ctx, info, req.Command)
	}

	t := m.newTask(info.SessionID, req.Command, mode)
	t.timeout = cmp(req.Timeout, DefaultTimeout)
	t.server = LooksLikeServer(req.Command)
	yield := req.Yield
	if yield == 0 {
		yield = DefaultYield
		if t.server {
			yield = ServerYield
		}
	}
	if deadline, ok := ctx.Deadline(); ok {
		// The host stops waiting at its deadline: hand the command back as
		// a task before that, rather than lose the call's answer.
		if before := time.Until(deadline) * 9 / 10; before < yield {
			yield = max(before, time.Millisecond)
		}
	}
	if err := m.startForeground(ctx, t, info.Workspace); err != nil {
		return nil, startError(info.Workspace, err)
	}
	defer t.sb.attach(ctx)()
	if req.Watch != nil {
		defer req.Watch(Output{t: t})()
	}

	yieldTimer := time.NewTimer(yield)
	defer yieldTimer.Stop()
	for {
		select {
		case <-t.done:
			return m.returned(t)
		case <-ctx.Done():
			// The call is still in flight: its cancellation kills the group.
			t.cancel(errCallCancelled)
			<-t.done
			return m.returned(t)
		case <-yieldTimer.C:
			if t.sb.asking() {
				// An exec of the tree waits for the host's answer, which
				// only a call in flight can get: yield once it has one.
				yieldTimer.Reset(askPoll)
				continue
			}
			// Said before the check: the wait goroutine, if the command
			// ends now, sees it and releases the task's cgroup.
			t.yielded.Store(true)
			if t.finished() {
				return m.returned(t)
			}
			if !m.adopt(t) {
				// Every task slot holds a running task: keep waiting in the
				// foreground rather than lose track of this command.
				continue
			}
			return m.yieldResult(t, yield), nil
		}
	}
}

// returned is the receipt of a call whose command has finished. Its cgroup
// is let go as the call returns: what the command left behind (`nohup
// server &`) lives on, and nothing kills it later.
func (m *Manager) returned(t *task) (*sdk.Result, error) {
	res, err := m.callResult(t)
	t.releaseGroup()
	return res, err
}

func cmp(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func resolveMode(mode, command string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(mode)) {
	case "", ModeAuto:
		if NeedsTerminal(command) {
			return ModePTY, nil
		}
		return ModePipe, nil
	case ModePipe:
		return ModePipe, nil
	case ModePTY:
		return ModePTY, nil
	}
	return "", sdk.Errorf(sdk.CodeInvalidInput, "mode %q is not one of auto, pipe, pty: use pty for a command that needs a terminal (prompts, REPLs, editors), pipe for plain output, or leave it out", mode)
}

// startForeground starts t in its own process group and hands its end to a
// goroutine. The command runs under a context of the task's own, derived
// from the call's values but not its cancellation: the call kills it only
// while the call is in flight (Run's select), so a task that yielded
// survives the end of the call that started it.
func (m *Manager) startForeground(callCtx context.Context, t *task, dir string) error {
	base, cancel := context.WithCancelCause(context.WithoutCancel(callCtx))
	taskCtx, stopTimeout := context.WithTimeoutCause(base, t.timeout, errTimedOut)
	t.cancel = cancel
	t.out = output.NewBuffer(m.opts.MaxOutputBytes)

	var cmd *exec.Cmd
	var out outputEnd
	var err error
	if t.mode == ModePTY {
		cmd, out, err = m.startPTY(taskCtx, t, dir)
	} else {
		cmd, out, err = m.startPipe(taskCtx, t, dir)
	}
	if err != nil {
		stopTimeout()
		cancel(nil)
		return err
	}
	t.pid = cmd.Process.Pid
	t.pgid = t.pid // Setpgid (pipe) and Setsid (pty) make bash its group's leader.
	entry := m.groups.register(t.pgid, t.group())
	reportCtx := context.WithoutCancel(callCtx)
	m.report(reportCtx, t.pgid, true)
	m.track(t)

	go func() {
		defer cancel(nil)
		defer stopTimeout()
		err := cmd.Wait()
		held, waited := m.drain(t, out)
		t.end = classify(err, cmd.ProcessState, taskCtx, entry.stopped.Load())
		if held && t.end.kind == endExited {
			t.end.heldOpen, t.end.heldFor = true, waited
		}
		m.checkBounds(t)
		m.groups.unregister(t.pgid)
		m.report(reportCtx, t.pgid, false)
		m.untrack(t)
		// A task's call returned long ago: it is let go as it ends, before
		// its end is told. A yield at this very moment is seen after.
		released := t.yielded.Load()
		if released {
			t.releaseGroup()
		}
		close(t.done)
		if !released && t.yielded.Load() {
			t.releaseGroup()
		}
	}()
	return nil
}

// startPipe starts t with its output on a pipe and stdin on /dev/null: a
// pipe-mode command never waits on a stdin nobody writes. The pipe is ours,
// not exec's, so that Wait returns as bash exits and drain decides how long
// to wait for what bash left holding the pipe.
func (m *Manager) startPipe(ctx context.Context, t *task, dir string) (*exec.Cmd, outputEnd, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, outputEnd{}, fmt.Errorf("open the output pipe: %w", err)
	}
	cmd := exec.CommandContext(ctx, m.opts.Shell, "-c", t.command)
	cmd.Dir = dir
	cmd.Env = m.env(ctx, false)
	cmd.Stdout = w // one pipe for both, in order
	cmd.Stderr = w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = killTree(t, cmd)
	cmd.WaitDelay = m.opts.WaitDelay
	err = m.launch(ctx, t, cmd)
	w.Close() // the command holds its own copy
	if err != nil {
		r.Close()
		return nil, outputEnd{}, err
	}
	return cmd, copyOutput(t, r, func() { r.Close() }), nil
}

// startPTY starts t on a new terminal, as leader of a new session (and so of
// its own process group).
func (m *Manager) startPTY(ctx context.Context, t *task, dir string) (*exec.Cmd, outputEnd, error) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		return nil, outputEnd{}, fmt.Errorf("open a terminal: %w", err)
	}
	defer tty.Close()
	size := terminalSize
	if err := pty.Setsize(ptmx, &size); err != nil {
		ptmx.Close()
		return nil, outputEnd{}, fmt.Errorf("size the terminal: %w", err)
	}
	master, err := pollable(ptmx)
	if err != nil {
		return nil, outputEnd{}, err
	}
	cmd := exec.CommandContext(ctx, m.opts.Shell, "-c", t.command)
	cmd.Dir = dir
	cmd.Env = m.env(ctx, true)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	cmd.Cancel = killTree(t, cmd)
	cmd.WaitDelay = m.opts.WaitDelay
	if err := m.launch(ctx, t, cmd); err != nil {
		master.Close()
		return nil, outputEnd{}, err
	}
	t.master = master
	// The copy ends with EIO once no process holds the terminal.
	return cmd, copyOutput(t, master, t.closeMaster), nil
}

// pollable returns a non-blocking duplicate of a PTY master, so that Close
// interrupts a pending Read (pty's ioctls leave the original blocking).
func pollable(ptmx *os.File) (*os.File, error) {
	defer ptmx.Close()
	fd, err := syscall.Dup(int(ptmx.Fd()))
	if err != nil {
		return nil, fmt.Errorf("duplicate the terminal: %w", err)
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("terminal non-blocking: %w", err)
	}
	return os.NewFile(uintptr(fd), "pty"), nil
}

// yieldResult is the receipt of a call whose command goes on as a task.
func (m *Manager) yieldResult(t *task, yield time.Duration) *sdk.Result {
	diag := diagnose(t, t.peekTail())
	c := t.readNew(m.opts.MaxOutputBytes)
	d := t.data("running", c)
	d.Diagnosis = diag.Kind
	text := fmt.Sprintf("The command is still running after %s, so it goes on as task %s (pid %d, %s). "+
		"It stays owned by this session and is killed at its timeout (%s after it started) if it has not ended by then.\n%s\n"+
		"Output so far:\n%s",
		yield, t.id, t.pid, t.mode, t.timeout, diag.Text, body(c, "(no output yet)"))
	return &sdk.Result{Text: text, Data: d}
}

// runBackground starts a command that outlives the call, the plugin and the
// host: its own session and group, stdin on /dev/null, output on a private
// log file, no pipe to this process, not registered.
func (m *Manager) runBackground(ctx context.Context, info sdk.CallInfo, command string) (*sdk.Result, error) {
	t := m.newTask(info.SessionID, command, modeBackground)
	if !m.adopt(t) {
		return nil, m.tooManyTasks()
	}
	started := false
	defer func() {
		if !started {
			m.release(t)
		}
	}()
	dir, err := shellDir(m.opts.StateDir, info.SessionID)
	if err != nil {
		return nil, fmt.Errorf("run_bash: %w", err)
	}
	t.logPath = filepath.Join(dir, t.id+".log")
	logf, err := os.OpenFile(t.logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("run_bash: background log: %w", err)
	}
	cmd := exec.Command(m.opts.Shell, "-c", command)
	cmd.Dir = info.Workspace
	cmd.Env = m.env(ctx, false)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = m.launch(ctx, t, cmd)
	logf.Close()
	if err != nil {
		return nil, startError(info.Workspace, err)
	}
	started = true
	t.pid = cmd.Process.Pid
	t.pgid = t.pid
	if tmp := info.Temp; tmp != nil {
		// The session's temp folder outlives the session while this
		// command lives: recorded before the call returns, so the host
		// sees it before it ends the session. The host alone removes it.
		cg := ""
		if g := t.group(); g != nil {
			cg = g.Path
		}
		if err := sessiontmp.Hold(tmp.Dir, t.pid, cg); err != nil {
			m.opts.Logger.Warn("shell: the session's temp folder may go before this background command ends", "task", t.id, "err", err)
		}
	}
	go func() {
		// Reap it while this process lives; once the plugin is gone, init
		// does.
		err := cmd.Wait()
		e := classify(err, cmd.ProcessState, context.Background(), false)
		t.mu.Lock()
		cancelling := t.cancelling
		if cancelling && e.signal != 0 {
			e.kind, e.cause = endCancelled, errShellCancel
		}
		t.mu.Unlock()
		t.end = e
		m.checkBounds(t)
		close(t.done)
		if !cancelling {
			// Ended on its own: what it left lives on. (shell_cancel kills
			// the whole group first, then lets it go.)
			t.releaseGroup()
		}
	}()

	select {
	case <-t.done:
		// It failed (or finished) at once: say so now.
		m.release(t)
		return m.endResult(t, ""), nil
	case <-time.After(m.opts.BackgroundSettle):
	case <-ctx.Done():
	}
	where := "its own session"
	if g := t.group(); g != nil {
		where += " and cgroup " + g.Dir()
	}
	text := fmt.Sprintf("Started in the background as task %s (pid %d). It runs in %s, outside this call: "+
		"it keeps running after the call, the plugin and the host end. Its output goes to %s; "+
		"read it with shell_wait {\"task_id\": %q} and stop it, with every process it started, with shell_cancel.",
		t.id, t.pid, where, t.logPath, t.id)
	return &sdk.Result{Text: text, Data: t.data("running", output.Chunk{})}, nil
}

func (m *Manager) tooManyTasks() error {
	return sdk.Errorf("too_many_tasks", "this session already has %d shell tasks running (the limit): "+
		"wait for one with shell_wait or stop one with shell_cancel, then try again. shell_tasks lists them", m.opts.MaxTasks)
}
