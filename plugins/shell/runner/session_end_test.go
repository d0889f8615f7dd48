package runner

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// TestEndSession_KillsItsForegroundTasksOnly: ending a session kills its
// yielded foreground command and forgets its tasks; another session's
// command and its own background command keep running.
func TestEndSession_KillsItsForegroundTasksOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{WaitDelay: 100 * time.Millisecond})
	start := func(session string, background bool) int {
		t.Helper()
		pids := pidsFile(t)
		req := RunRequest{Command: fmt.Sprintf("echo $$ > '%s'; exec sleep 100", pids), Yield: 100 * time.Millisecond, Background: background}
		if _, err := f.m.Run(f.ctxFor(t.Context(), session), req); err != nil {
			t.Fatalf("Run in %s (background %v): %v", session, background, err)
		}
		return waitForPidsWritten(t, pids, 1)[0]
	}
	endedFg, endedBg, otherFg := start("ended", false), start("ended", true), start("other", false)
	t.Cleanup(func() { _ = syscall.Kill(endedBg, syscall.SIGKILL) })

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := f.m.EndSession(ctx, "ended"); err != nil {
		t.Fatalf("EndSession: %v", err)
	}
	// EndSession waits for the commands it kills.
	if alive(endedFg) {
		t.Errorf("the ended session's yielded foreground command (pid %d) outlived EndSession", endedFg)
	}
	if !alive(endedBg) {
		t.Errorf("the ended session's background command (pid %d) died; it lives on", endedBg)
	}
	if !alive(otherFg) {
		t.Errorf("another session's foreground command (pid %d) died", otherFg)
	}
	if got := f.m.sessionTasks("ended"); len(got) != 0 {
		t.Errorf("the ended session still has %d tasks; want its table dropped", len(got))
	}
	if got := len(f.m.sessionTasks("other")); got != 1 {
		t.Errorf("the other session has %d tasks, want its 1", got)
	}
}
