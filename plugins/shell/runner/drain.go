package runner

import (
	"io"
	"time"
)

// outputEnd is this process's end of a foreground command's output: the
// reading end of its pipe, or its terminal's master, copied into the
// task's buffer by a goroutine of its own.
type outputEnd struct {
	// copied is closed once the copy has ended: every process holding the
	// other end closed it, or stop was called.
	copied chan struct{}
	// stop closes this end, which ends the copy.
	stop func()
}

// copyOutput copies r into t's buffer until r ends or stop closes it.
func copyOutput(t *task, r io.Reader, stop func()) outputEnd {
	out := outputEnd{copied: make(chan struct{}), stop: stop}
	go func() {
		defer close(out.copied)
		_, _ = io.Copy(t.out, r) // ends at EOF (EIO for a terminal) or when stop closes r
	}()
	return out
}

// drain waits for the copy of a command's output to end, once the command
// itself has exited. Processes it left behind (`sleep 97 &`) may hold the
// output open: the wait then ends once the output has been quiet for
// OutputQuiet (each new output starts the spell again), and in any case
// WaitDelay after the exit. A command's own output is all in the pipe by
// the time it exits, so the quiet spell only cuts what the processes it
// left behind write later.
//
// held reports that the wait was cut short, waited after the exit: the
// output was closed on those processes. They are sent no signal; a later
// write of theirs meets a closed pipe (SIGPIPE or EPIPE), as it would
// under any reader that went away.
func (m *Manager) drain(t *task, out outputEnd) (held bool, waited time.Duration) {
	exited := time.Now()
	quiet := min(m.opts.OutputQuiet, m.opts.WaitDelay)
	limit := time.NewTimer(m.opts.WaitDelay)
	defer limit.Stop()
	silent := time.NewTimer(quiet)
	defer silent.Stop()
	for {
		select {
		case <-out.copied:
			out.stop()
			return false, 0
		case <-t.out.Changed():
			silent.Reset(quiet)
			continue
		case <-silent.C:
		case <-limit.C:
		}
		break
	}
	out.stop()
	// No byte lands in the buffer after the receipt is written.
	<-out.copied
	return true, time.Since(exited)
}
