package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk"
)

// collect waits on a task until it ends (bounded) and returns all the text
// the waits returned, and the last result.
func collect(t *testing.T, f *fixture, id string) (string, *sdk.Result) {
	t.Helper()
	var sb strings.Builder
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		res, err := f.m.Wait(f.ctx(t.Context()), id, 2*time.Second)
		if err != nil {
			t.Fatalf("Wait(%s): %v", id, err)
		}
		sb.WriteString(res.Text)
		if data(t, res).Status != "running" {
			return sb.String(), res
		}
	}
	t.Fatalf("task %s did not end within 10s; output so far %q", id, sb.String())
	return "", nil
}

func TestRunBash_YieldThenWaitReadsOnlyNewOutput(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	dir := t.TempDir()
	gate := filepath.Join(dir, "go")
	// The command prints, then waits for the test's go-ahead file.
	cmd := fmt.Sprintf("echo first; while [ ! -e '%s' ]; do sleep 0.01; done; echo second; exit 4", gate)
	res, err := f.m.Run(f.ctx(t.Context()), RunRequest{Command: cmd, Yield: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	d := data(t, res)
	if d.Status != "running" || !strings.Contains(res.Text, "first") {
		t.Fatalf("Run = %q (%+v), want a yielded task that printed first", res.Text, d)
	}
	if d.Diagnosis != DiagWorking {
		t.Errorf("diagnosis = %q, want %q", d.Diagnosis, DiagWorking)
	}
	os.WriteFile(gate, nil, 0o600)
	all, last := collect(t, f, d.TaskID)
	if strings.Contains(all, "first") {
		t.Errorf("shell_wait returned %q: output already read came back", all)
	}
	if !strings.Contains(all, "second") || !strings.Contains(last.Text, "exited with code 4") {
		t.Errorf("shell_wait = %q, want the rest of the output and exit code 4", all)
	}
	if _, err := f.m.Wait(f.ctx(t.Context()), d.TaskID, time.Second); err == nil {
		t.Errorf("Wait on a task whose end was reported: got no error, want not_found")
	} else if te := toolError(t, err); te.Code != sdk.CodeNotFound {
		t.Errorf("code = %q, want %q", te.Code, sdk.CodeNotFound)
	}
}

func TestWait_TimesOutWithoutStoppingTheTask(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	pids := pidsFile(t)
	res, err := f.m.Run(f.ctx(t.Context()), RunRequest{Command: fmt.Sprintf("echo $$ > '%s'; sleep 100", pids), Yield: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	id := data(t, res).TaskID
	w, err := f.m.Wait(f.ctx(t.Context()), id, 100*time.Millisecond)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if !strings.Contains(w.Text, "still running after waiting 100ms") {
		t.Errorf("Wait = %q, want it to say the task is still running", w.Text)
	}
	if p := waitForPidsWritten(t, pids, 1); !alive(p[0]) {
		t.Errorf("the task died when shell_wait timed out")
	}
	list, _ := f.m.Tasks(f.ctx(t.Context()))
	if !strings.Contains(list.Text, id) || !strings.Contains(list.Text, "running") {
		t.Errorf("Tasks = %q, want %s listed as running", list.Text, id)
	}
	other, _ := f.m.Tasks(f.ctxFor(t.Context(), "s2"))
	if strings.Contains(other.Text, id) {
		t.Errorf("another session's Tasks = %q lists %s: tasks are per session", other.Text, id)
	}
	if _, err := f.m.Wait(f.ctxFor(t.Context(), "s2"), id, time.Millisecond); err == nil {
		t.Errorf("another session reached task %s", id)
	}
}

func TestRunBash_BackgroundOutlivesCallAndForegroundCancel(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	f := newFixture(t, Options{StateDir: state, WaitDelay: 100 * time.Millisecond})
	bg := pidsFile(t)
	res, err := f.m.Run(f.ctx(t.Context()), RunRequest{Command: fmt.Sprintf("echo $$ > '%s'; echo hello-from-bg; exec sleep 100", bg), Background: true})
	if err != nil {
		t.Fatalf("background Run: %v", err)
	}
	d := data(t, res)
	if d.Mode != modeBackground || d.TaskID == "" || d.LogPath == "" {
		t.Fatalf("data = %+v, want a background task with a log", d)
	}
	bgPid := waitForPidsWritten(t, bg, 1)
	if live := f.m.LiveProcessGroups(); len(live) != 0 {
		t.Errorf("LiveProcessGroups() = %v, want none: background commands are not registered", live)
	}

	// Cancel a foreground task; the background command must not notice.
	fg, err := f.m.Run(f.ctx(t.Context()), RunRequest{Command: "sleep 100", Yield: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("foreground Run: %v", err)
	}
	if _, err := f.m.Cancel(f.ctx(t.Context()), data(t, fg).TaskID); err != nil {
		t.Fatalf("Cancel foreground: %v", err)
	}
	f.m.KillLiveProcessGroups()
	if !alive(bgPid[0]) {
		t.Fatalf("the background command died with a foreground cancel")
	}

	w, err := f.m.Wait(f.ctx(t.Context()), d.TaskID, 50*time.Millisecond)
	if err != nil || !strings.Contains(w.Text, "hello-from-bg") {
		t.Errorf("Wait(background) = %v, %v; want its log", w, err)
	}

	// Private state: 0700 folders, 0600 log.
	for path, want := range map[string]os.FileMode{d.LogPath: 0o600, filepath.Dir(d.LogPath): 0o700, filepath.Dir(filepath.Dir(d.LogPath)): 0o700} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatalf("stat %s: %v", path, err)
		}
		if got := st.Mode().Perm(); got != want {
			t.Errorf("%s mode = %o, want %o", path, got, want)
		}
	}
	if !strings.HasPrefix(d.LogPath, filepath.Join(state, "sessions", "s1")) {
		t.Errorf("log %s is not in the session folder under %s", d.LogPath, state)
	}

	out, err := f.m.Cancel(f.ctx(t.Context()), d.TaskID)
	if err != nil {
		t.Fatalf("Cancel background: %v", err)
	}
	if !strings.Contains(out.Text, "Background task "+d.TaskID+" was stopped by shell_cancel") {
		t.Errorf("Cancel = %q", out.Text)
	}
	if left := waitDead(bgPid); len(left) > 0 {
		t.Errorf("background command %v survived shell_cancel", left)
	}
}

func TestRunBash_BackgroundThatFailsAtOnceSaysSo(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{BackgroundSettle: 5 * time.Second})
	res, err := f.m.Run(f.ctx(t.Context()), RunRequest{Command: "echo no-such-thing >&2; exit 127", Background: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(res.Text, "exited with code 127") || !strings.Contains(res.Text, "no-such-thing") {
		t.Errorf("text = %q, want the exit code and the log", res.Text)
	}
	if list, _ := f.m.Tasks(f.ctx(t.Context())); !strings.Contains(list.Text, "No shell tasks") {
		t.Errorf("Tasks = %q: a background command whose end was reported stays listed", list.Text)
	}
}

func TestRunBash_TasksPerSessionAreBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{MaxTasks: 2})
	for i := range 2 {
		res, err := f.m.Run(f.ctx(t.Context()), RunRequest{Command: "exec sleep 100", Background: true})
		if err != nil {
			t.Fatalf("Run %d: %v", i, err)
		}
		id := data(t, res).TaskID
		t.Cleanup(func() { f.m.Cancel(f.ctx(context.Background()), id) })
	}
	res, err := f.m.Run(f.ctx(t.Context()), RunRequest{Command: "exec sleep 100", Background: true})
	if err == nil {
		f.m.Cancel(f.ctx(context.Background()), data(t, res).TaskID)
		t.Fatalf("a third task started past the bound of 2")
	}
	te := toolError(t, err)
	if te.Code != "too_many_tasks" || !strings.Contains(te.Message, "shell_cancel") {
		t.Errorf("third task = %q %q, want too_many_tasks naming what to do", te.Code, te.Message)
	}
	// Another session has its own slots.
	res, err = f.m.Run(f.ctxFor(t.Context(), "s2"), RunRequest{Command: "exec sleep 100", Background: true})
	if err != nil {
		t.Fatalf("other session: %v", err)
	}
	id := data(t, res).TaskID
	f.m.Cancel(f.ctxFor(t.Context(), "s2"), id)
}

func TestWriteStdin_PipeTaskHasNoStdinButTakesCtrlC(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	res, err := f.m.Run(f.ctx(t.Context()), RunRequest{
		Command: "trap 'echo got-interrupt; exit 7' INT; echo ready; while true; do sleep 0.02; done",
		Yield:   200 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	id := data(t, res).TaskID
	_, err = f.m.WriteStdin(f.ctx(t.Context()), id, "yes", []string{"enter"})
	if te := toolError(t, err); te.Code != sdk.CodeInvalidInput || !strings.Contains(te.Message, "mode=pty") {
		t.Errorf("WriteStdin(text) on a pipe task = %q %q, want invalid_input pointing at mode=pty", te.Code, te.Message)
	}
	w, err := f.m.WriteStdin(f.ctx(t.Context()), id, "", []string{"ctrl-c"})
	if err != nil {
		t.Fatalf("WriteStdin(ctrl-c): %v", err)
	}
	all := w.Text
	if data(t, w).Status == "running" {
		rest, _ := collect(t, f, id)
		all += rest
	}
	if !strings.Contains(all, "got-interrupt") || !strings.Contains(all, "exited with code 7") {
		t.Errorf("after ctrl-c: %q, want the trap's output and exit code 7", all)
	}
}

func TestWriteStdin_RejectsUnknownKeys(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	res, err := f.m.Run(f.ctx(t.Context()), RunRequest{Command: "cat", Mode: ModePTY, Yield: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	id := data(t, res).TaskID
	defer f.m.Cancel(f.ctx(context.Background()), id)
	_, err = f.m.WriteStdin(f.ctx(t.Context()), id, "", []string{"f13"})
	if te := toolError(t, err); te.Code != sdk.CodeInvalidInput || !strings.Contains(te.Message, "ctrl-c") {
		t.Errorf("unknown key = %q %q, want invalid_input listing the keys", te.Code, te.Message)
	}
}

func TestPTY_ReadPromptDrivenToCompletion(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	res, err := f.m.Run(f.ctx(t.Context()), RunRequest{
		Command: `read -p "name? " n; echo "hello $n"`,
		Mode:    ModePTY,
		Yield:   300 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	d := data(t, res)
	if d.Status != "running" || d.Mode != ModePTY {
		t.Fatalf("Run = %q (%+v), want a yielded pty task", res.Text, d)
	}
	if strings.Contains(res.Text, "name? ") && d.Diagnosis != DiagPrompt {
		t.Errorf("diagnosis = %q at %q, want %q", d.Diagnosis, res.Text, DiagPrompt)
	}
	w, err := f.m.WriteStdin(f.ctx(t.Context()), d.TaskID, "alice", []string{"enter"})
	if err != nil {
		t.Fatalf("WriteStdin: %v", err)
	}
	all := w.Text
	if data(t, w).Status == "running" {
		rest, _ := collect(t, f, d.TaskID)
		all += rest
	}
	if !strings.Contains(all, "hello alice") || !strings.Contains(all, "exited with code 0") {
		t.Errorf("after answering: %q, want hello alice and exit code 0", all)
	}
}

func TestPTY_PythonREPL(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	f := newFixture(t, Options{})
	res, err := f.m.Run(f.ctx(t.Context()), RunRequest{Command: "python3", Yield: time.Second})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	d := data(t, res)
	if d.Mode != ModePTY || d.Status != "running" {
		t.Fatalf("Run(python3) = %+v, want mode auto to pick a pty and the REPL to yield", d)
	}
	all := res.Text
	deadline := time.Now().Add(10 * time.Second)
	// Under load the REPL may reach its prompt after the yield: what is
	// typed before it would be judged against bash, still starting it,
	// and refused.
	for !strings.Contains(all, ">>>") && time.Now().Before(deadline) {
		w, err := f.m.Wait(f.ctx(t.Context()), d.TaskID, 500*time.Millisecond)
		if err != nil {
			t.Fatalf("Wait for the prompt: %v", err)
		}
		all += w.Text
	}
	w, err := f.m.WriteStdin(f.ctx(t.Context()), d.TaskID, "print(6*7)", []string{"enter"})
	for err == nil && !strings.Contains(all+w.Text, "42") && time.Now().Before(deadline) {
		all += w.Text
		w, err = f.m.Wait(f.ctx(t.Context()), d.TaskID, 500*time.Millisecond)
	}
	if err != nil {
		t.Fatalf("REPL: %v", err)
	}
	all += w.Text
	if !strings.Contains(all, "42") {
		t.Fatalf("REPL output = %q, want 42", all)
	}
	w, err = f.m.WriteStdin(f.ctx(t.Context()), d.TaskID, "", []string{"ctrl-d"})
	if err != nil {
		t.Fatalf("WriteStdin(ctrl-d): %v", err)
	}
	end := w.Text
	if data(t, w).Status == "running" {
		rest, _ := collect(t, f, d.TaskID)
		end += rest
	}
	if !strings.Contains(end, "exited with code 0") {
		t.Errorf("after ctrl-d: %q, want the REPL to exit with code 0", end)
	}
}

func TestRunBash_OutputArrivesSanitized(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	res, err := f.m.Run(f.ctx(t.Context()), RunRequest{Command: `printf 'a\000b\377\033[31mred\033[0m\r\n'`})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if want := "a\\x00b\uFFFDred\n"; res.Text != want {
		t.Errorf("text = %q, want %q", res.Text, want)
	}
}

func TestRunBash_HugeOutputReturnsCapped(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{MaxOutputBytes: 64 << 10})
	const n = 50 << 20
	res, err := f.m.Run(f.ctx(t.Context()), RunRequest{Command: fmt.Sprintf("yes | head -c %d", n)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	d := data(t, res)
	if d.OutputBytes != n || *d.ExitCode != 0 {
		t.Errorf("data = %+v, want %d bytes counted and exit 0", d, n)
	}
	if len(res.Text) > 70<<10 {
		t.Errorf("text is %d bytes, want about the 64 KiB cap", len(res.Text))
	}
}

func TestRunBash_RejectsBadInput(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	for _, req := range []RunRequest{
		{Command: "  "},
		{Command: "true", Mode: "tty"},
		{Command: "true", Timeout: -time.Second},
		{Command: "true", Background: true, Mode: ModePTY},
	} {
		_, err := f.m.Run(f.ctx(t.Context()), req)
		if te := toolError(t, err); te.Code != sdk.CodeInvalidInput {
			t.Errorf("Run(%+v) code = %q, want %q", req, te.Code, sdk.CodeInvalidInput)
		}
	}
}

func TestDefaultStateDir(t *testing.T) {
	// Not parallel: it sets the environment.
	t.Setenv("YAGENT_STATE_DIR", "/x/state")
	if d, _ := DefaultStateDir(); d != "/x/state" {
		t.Errorf("with YAGENT_STATE_DIR: %q", d)
	}
	t.Setenv("YAGENT_STATE_DIR", "")
	t.Setenv("XDG_STATE_HOME", "/x/xdg")
	if d, _ := DefaultStateDir(); d != "/x/xdg/yagent" {
		t.Errorf("with XDG_STATE_HOME: %q", d)
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "/x/home")
	if d, _ := DefaultStateDir(); d != "/x/home/.yagent/state" {
		t.Errorf("with HOME only: %q", d)
	}
}

func TestRunBash_PipeStdinIsEmpty(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	// On pipes, a command that reads stdin gets end-of-file at once, never
	// an open pipe nobody writes.
	o := await(t, f.runAsync(f.ctx(t.Context()), RunRequest{Command: `read -r x; echo "read=$? x=$x"`, Yield: time.Minute, Timeout: time.Minute}),
		5*time.Second, "a pipe-mode command reading stdin")
	if o.err != nil {
		t.Fatalf("Run: %v", o.err)
	}
	if o.res.Text != "read=1 x=\n" {
		t.Errorf("text = %q, want read to hit end-of-file", o.res.Text)
	}
}

func TestResolveMode(t *testing.T) {
	t.Parallel()
	tests := []struct{ mode, command, want string }{
		{"", "sudo ls", ModePTY},
		{ModeAuto, "python3", ModePTY},
		{"", "ls -la", ModePipe},
		{"", `read -p "name? " n`, ModePipe},
		{ModePTY, "ls", ModePTY},
		{ModePipe, "sudo ls", ModePipe},
		{" PTY ", "ls", ModePTY},
	}
	for _, tt := range tests {
		got, err := resolveMode(tt.mode, tt.command)
		if err != nil || got != tt.want {
			t.Errorf("resolveMode(%q, %q) = %q, %v; want %q", tt.mode, tt.command, got, err, tt.want)
		}
	}
}
