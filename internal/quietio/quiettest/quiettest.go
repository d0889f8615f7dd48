package quiettest

import (
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/yagent/yagent/internal/proctest"
	"github.com/yagent/yagent/internal/quietio"
)

// SwitchesAfterIdleSpells calls call n times, each after an idle spell of
// about 3 ms that a child's write to a pipe ends, and returns the thread
// switches of this process over the n calls. The pipe is read with raw
// reads (quietio) and no timer of this process ends a spell, so what the
// count holds beyond the reads is what call wakes: with one processor
// (GOMAXPROCS=1), the runtime's monitor thread, which a system call made
// through the scheduler's bookkeeping wakes after every spell.
func SwitchesAfterIdleSpells(t testing.TB, n int, call func()) int {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -le "+strconv.Itoa(n)+" ]; do sleep 0.003; printf x; i=$((i+1)); done")
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer func() { _ = cmd.Wait() }()
	q := quietio.File(r)
	b := make([]byte, 1)
	if _, err := q.Read(b); err != nil { // the first write ends sh's start, which the count leaves out
		t.Fatal(err)
	}
	before := proctest.ThreadSwitches(t)
	for range n {
		if _, err := q.Read(b); err != nil {
			t.Fatal(err)
		}
		call()
	}
	return proctest.ThreadSwitches(t) - before
}
