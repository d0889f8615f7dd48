package runner

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/yagent/yagent/plugins/shell/output"
	"github.com/yagent/yagent/sdk"
	"golang.org/x/sys/unix"
)

// Data is the structured part of every shell result.
type Data struct {
	// Status is running, exited, killed_by_signal, timed_out, cancelled,
	// stopped or failed.
	Status   string `json:"status"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Signal   string `json:"signal,omitempty"`
	TaskID   string `json:"task_id,omitempty"`
	PID      int    `json:"pid,omitempty"`
	// Mode is pipe, pty or background.
	Mode      string `json:"mode,omitempty"`
	Diagnosis string `json:"diagnosis,omitempty"`
	// OutputBytes counts every byte of output the command wrote so far;
	// OmittedBytes those of this result's stretch that were left out.
	OutputBytes  int64 `json:"output_bytes"`
	OmittedBytes int64 `json:"omitted_bytes,omitempty"`
	// HeldOpen: the command exited but processes it started kept its output
	// open; output after the wait delay is not shown.
	HeldOpen  bool   `json:"output_held_open,omitempty"`
	LogPath   string `json:"log_path,omitempty"`
	ElapsedMS int64  `json:"elapsed_ms"`
	// BoundsHit names the bounds of the sandbox the command ran into
	// ("pids", "memory_mb"); the text says what each refused.
	BoundsHit []string `json:"bounds_hit,omitempty"`
}

func (t *task) data(status string, c output.Chunk) *Data {
	d := &Data{
		Status:       status,
		TaskID:       t.id,
		PID:          t.pid,
		Mode:         t.mode,
		OutputBytes:  t.outputBytes(),
		OmittedBytes: c.Omitted,
		LogPath:      t.logPath,
		ElapsedMS:    time.Since(t.started).Milliseconds(),
	}
	if t.finished() {
		d.ElapsedMS = t.end.at.Sub(t.started).Milliseconds()
		if t.end.kind == endExited {
			code := t.end.exitCode
			d.ExitCode = &code
		}
		if t.end.signal != 0 {
			d.Signal = signalName(t.end.signal)
		}
		d.HeldOpen = t.end.heldOpen
		d.BoundsHit = t.boundNames()
	}
	return d
}

// heldOpenNote explains an exit whose output pipes stayed open.
func heldOpenNote(mode string, waited time.Duration) string {
	what := "output"
	if mode == ModePTY {
		what = "terminal"
	}
	return fmt.Sprintf("processes it started in the background kept its %s open, so the call stopped waiting %s after it exited: "+
		"their later output is not shown and they may still be running. Start long-lived processes with is_background=true",
		what, waited.Round(time.Millisecond))
}

// body is the output text of a result: the chunk, or a word saying there is
// none.
func body(c output.Chunk, none string) string {
	if c.Len() == 0 {
		return none
	}
	return c.Text()
}

// withStatus appends a status line to output text.
func withStatus(text, status string) string {
	if status == "" {
		return text
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + status
}

// callResult is the receipt of a foreground call that ended before it
// yielded: one of success, an exit whose output was held open (with the
// real exit code), a timeout, a cancel (two distinct texts and codes), a
// non-zero exit, or a signal. The wait error's own text ("signal: killed")
// never reaches the model.
func (m *Manager) callResult(t *task) (*sdk.Result, error) {
	c := t.readNew(m.opts.MaxOutputBytes)
	text := body(c, "(no output)")
	if note := t.sandboxNotes(c.Text()); note != "" {
		text = withStatus(text, note)
	}
	e := t.end
	d := t.data(e.kind, c)
	switch e.kind {
	case endExited:
		switch {
		case e.heldOpen && t.hit.left > 0:
			// They ran into a bound and were killed: boundNotes says so.
			text = withStatus(text, fmt.Sprintf("(exit code %d)", e.exitCode))
		case e.heldOpen:
			text = withStatus(text, fmt.Sprintf("(exit code %d; %s.)", e.exitCode, heldOpenNote(t.mode, e.heldFor)))
		case e.exitCode != 0:
			text = withStatus(text, fmt.Sprintf("(exit code %d)", e.exitCode))
		}
		return &sdk.Result{Text: text, Data: d}, nil
	case endSignaled:
		return &sdk.Result{Text: withStatus(text, fmt.Sprintf("(%s)", signalNote(e.signal))), Data: d}, nil
	case endTimedOut:
		return nil, &sdk.ToolError{Code: sdk.CodeTimeout, Data: d, Message: fmt.Sprintf(
			"The command timed out after %s and its whole process group was killed. "+
				"If it needs longer, raise timeout_ms; if it should keep running, start it with is_background=true.\n"+
				"Output before the timeout:\n%s", t.timeout, text)}
	case endCancelled:
		return nil, &sdk.ToolError{Code: sdk.CodeCancelled, Data: d, Message: fmt.Sprintf(
			"The call was cancelled before the command finished, and its whole process group was killed.\n"+
				"Output before the cancel:\n%s", text)}
	case endStopped:
		return nil, &sdk.ToolError{Code: sdk.CodeCancelled, Data: d, Message: fmt.Sprintf(
			"The shell plugin is stopping: it killed the command's whole process group before the command finished.\n"+
				"Output before it stopped:\n%s", text)}
	default:
		return nil, &sdk.ToolError{Code: sdk.CodeToolFailed, Data: d, Message: fmt.Sprintf(
			"Waiting for the command failed (%v), so its exit status is unknown.\nOutput:\n%s", e.err, text)}
	}
}

// endHeadline says how a task ended, for shell_wait, write_stdin and
// shell_cancel.
func (m *Manager) endHeadline(t *task) string {
	e := t.end
	what := "Task " + t.id
	if t.mode == modeBackground {
		what = "Background task " + t.id
	}
	switch e.kind {
	case endExited:
		if e.heldOpen {
			return fmt.Sprintf("%s exited with code %d; %s.", what, e.exitCode, heldOpenNote(t.mode, e.heldFor))
		}
		return fmt.Sprintf("%s exited with code %d.", what, e.exitCode)
	case endSignaled:
		return fmt.Sprintf("%s was %s.", what, signalNote(e.signal))
	case endTimedOut:
		return fmt.Sprintf("%s timed out %s after it started, and its whole process group was killed.", what, t.timeout)
	case endCancelled:
		if errors.Is(e.cause, errShellCancel) && t.mode == modeBackground {
			return fmt.Sprintf("%s was stopped by shell_cancel: SIGTERM to its process group, then SIGKILL to whatever was left.", what)
		}
		if errors.Is(e.cause, errShellCancel) {
			return fmt.Sprintf("%s was stopped by shell_cancel, and its whole process group was killed.", what)
		}
		return fmt.Sprintf("%s was cancelled (%v), and its whole process group was killed.", what, e.cause)
	case endStopped:
		return fmt.Sprintf("%s was stopped: the shell plugin is stopping and killed its whole process group.", what)
	default:
		return fmt.Sprintf("%s ended, but waiting for it failed (%v), so its exit status is unknown.", what, e.err)
	}
}

func signalNote(sig syscall.Signal) string {
	return fmt.Sprintf("killed by signal %s, which this tool did not send (the command itself, the system or another process did)", signalName(sig))
}

func signalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return fmt.Sprintf("signal %d", int(sig))
}
