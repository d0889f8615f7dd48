package runner

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/yagent/yagent/plugins/shell/output"
	"github.com/yagent/yagent/sdk/sandbox/cgroup"
)

// Why a task's context ended: its cause, read back when the receipt is
// written.
var (
	errTimedOut      = errors.New("the command's timeout passed")
	errCallCancelled = errors.New("the call was cancelled")
	errShellCancel   = errors.New("shell_cancel stopped the task")
	errStopping      = errors.New("the shell plugin is stopping")
	errSessionEnded  = errors.New("the session ended")
)

// The ways a command ends.
const (
	endExited    = "exited"
	endSignaled  = "killed_by_signal"
	endTimedOut  = "timed_out"
	endCancelled = "cancelled"
	endStopped   = "stopped"
	endFailed    = "failed"
)

// endState is how a command ended.
type endState struct {
	kind     string
	exitCode int
	signal   syscall.Signal
	// heldOpen: the command exited but processes it started kept its output
	// open, and the call stopped waiting for them heldFor after the exit.
	heldOpen bool
	heldFor  time.Duration
	// cause says who cancelled, for endCancelled.
	cause error
	// err is the wait error as exec returned it. Only endFailed shows it,
	// wrapped in a sentence: its bare text ("signal: killed") says nothing
	// a model can act on.
	err error
	at  time.Time
}

// task is one command: a foreground call in flight (kept as a task once it
// yields) or a background command.
type task struct {
	id        string
	sessionID string
	command   string
	mode      string // ModePipe, ModePTY, or modeBackground
	server    bool
	started   time.Time
	timeout   time.Duration
	pid, pgid int

	// cg is the command's cgroup, nil when it runs in its process group
	// only; set before the command starts, held under mu.
	cg *cgroup.Group
	// yielded says the call handed the command back as a task: its cgroup
	// is let go when the command ends, not when a call returns.
	yielded atomic.Bool

	out     *output.Buffer // foreground output
	logPath string         // background output
	cancel  context.CancelCauseFunc

	done chan struct{}
	end  endState // written before done is closed

	// stdin serializes write_stdin on the task from judging to the end of
	// its wait, so each input is judged against the program it reaches.
	stdin sync.Mutex
	line  line   // held under stdin
	ahead string // typed while no program read it; held under stdin

	mu         sync.Mutex
	master     *os.File // PTY master; nil once closed or for pipes
	readOff    int64    // output bytes already handed to the model
	cancelling bool     // shell_cancel signalled a background task

	sb *confinement // the sandbox it runs in; nil when none
	// hit is what the bounds of its cgroup refused, read as the command
	// ended (checkBounds), before done is closed.
	hit boundsHit
}

const modeBackground = "background"

func (t *task) finished() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// changed returns a channel closed when the task writes output; nil for a
// background task, whose output goes to a file.
func (t *task) changed() <-chan struct{} {
	if t.out == nil {
		return nil
	}
	return t.out.Changed()
}

func (t *task) outputBytes() int64 {
	if t.out != nil {
		return t.out.Total()
	}
	if st, err := os.Stat(t.logPath); err == nil {
		return st.Size()
	}
	return 0
}

// readNew returns the output the model has not seen yet and marks it seen.
func (t *task) readNew(max int) output.Chunk {
	t.mu.Lock()
	defer t.mu.Unlock()
	var c output.Chunk
	if t.out != nil {
		c = t.out.Since(t.readOff)
	} else {
		c = readLog(t.logPath, t.readOff, max)
	}
	t.readOff = c.End
	return c
}

// peekTail returns the last bytes of output as text, without marking them
// seen.
func (t *task) peekTail() string {
	const n = 4096
	if t.out != nil {
		return t.out.Since(max(0, t.out.Total()-n)).Text()
	}
	size := t.outputBytes()
	return readLog(t.logPath, max(0, size-n), n).Text()
}

// readLog reads a background log from off, at most max bytes: the head and
// the tail of the stretch, with what lies between counted as left out.
func readLog(path string, off int64, max int) output.Chunk {
	f, err := os.Open(path)
	if err != nil {
		return output.Chunk{Start: off, End: off}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return output.Chunk{Start: off, End: off}
	}
	size := st.Size()
	if off > size {
		off = size // the log was truncated by someone else
	}
	c := output.Chunk{Start: off, End: size}
	n := size - off
	if n <= int64(max) {
		c.Head = readAt(f, off, n)
		c.End = off + int64(len(c.Head))
		return c
	}
	half := int64(max / 2)
	c.Head = readAt(f, off, half)
	tailLen := int64(max) - half
	c.Tail = readAt(f, size-tailLen, tailLen)
	c.Omitted = n - half - tailLen
	return c
}

func readAt(f *os.File, off, n int64) []byte {
	b := make([]byte, n)
	k, _ := f.ReadAt(b, off) // a short read leaves the rest for the next one
	return b[:k]
}

// writeMaster writes to the task's terminal.
func (t *task) writeMaster(b []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.master == nil {
		return errors.New("the task's terminal is closed")
	}
	_, err := t.master.Write(b)
	return err
}

func (t *task) closeMaster() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.master != nil {
		t.master.Close()
		t.master = nil
	}
}

// classify turns the end of cmd.Wait into an endState. Who killed the
// command comes from the task's context and the live-group entry, never
// from the wait error's text.
func classify(err error, ps *os.ProcessState, taskCtx context.Context, stopped bool) endState {
	e := endState{at: time.Now(), err: err}
	if ps != nil {
		e.exitCode = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.signal = ws.Signal()
		}
	}
	killed := ps == nil || e.signal != 0
	cause := context.Cause(taskCtx)
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		e.kind = endExited
	case killed && (stopped || errors.Is(cause, errStopping)):
		e.kind = endStopped
	case killed && taskCtx.Err() != nil && errors.Is(cause, errTimedOut):
		e.kind = endTimedOut
	case killed && taskCtx.Err() != nil:
		e.kind = endCancelled
		e.cause = cause
	case e.signal != 0:
		e.kind = endSignaled
	case errors.As(err, &exitErr):
		e.kind = endExited
	default:
		e.kind = endFailed
	}
	return e
}
