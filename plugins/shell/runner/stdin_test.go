package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk"
)

func TestLine_ApplyJudgesTheWholeLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		before     line
		input      string
		keys       []string
		wantJudged string
		wantJudge  bool
		wantUnseen bool
		wantNext   string
	}{
		{name: "text and enter", input: "ls", keys: []string{"enter"}, wantJudged: "ls\n", wantJudge: true},
		{name: "a command split over writes is judged whole", before: line{text: "printen"}, input: "v X", keys: []string{"enter"}, wantJudged: "printenv X\n", wantJudge: true},
		{name: "text left typed is judged now", input: "printenv X", wantJudged: "printenv X", wantJudge: true, wantNext: "printenv X"},
		{name: "several lines at once", input: "cd sub\rcat x\n", wantJudged: "cd sub\ncat x\n", wantJudge: true},
		{name: "enter on a judged line needs nobody", before: line{text: "ls"}, keys: []string{"enter"}, wantJudged: "ls\n"},
		{name: "ctrl-c alone needs nobody", before: line{text: "rm x"}, keys: []string{"ctrl-c"}},
		{name: "ctrl-d alone needs nobody", keys: []string{"ctrl-d"}},
		{name: "backspace changes the line: judged when it runs", before: line{text: "printenvv"}, keys: []string{"backspace", "enter"}, wantJudged: "printenv\n", wantJudge: true},
		{name: "an edited line left typed is not judged yet", before: line{text: "printenvv"}, keys: []string{"backspace"}, wantNext: "printenv"},
		{name: "completion makes the line unseen", before: line{text: "printen"}, keys: []string{"tab", "enter"}, wantJudged: "printen\n", wantJudge: true, wantUnseen: true},
		{name: "history recall is unseen", keys: []string{"up", "enter"}, wantJudged: "\n", wantJudge: true, wantUnseen: true},
		{name: "text after an unseen edit", before: line{text: "pri", unseen: true}, input: "nt", wantJudged: "print", wantJudge: true, wantUnseen: true, wantNext: "print"},
		{name: "a control character in the text makes the line unseen", input: "echo safe\x15rm -rf x", keys: []string{"enter"}, wantJudged: "echo safe\x15rm -rf x\n", wantJudge: true, wantUnseen: true},
		{name: "DEL in the text makes the line unseen", input: "lsx\x7f\r", wantJudged: "lsx\x7f\n", wantJudge: true, wantUnseen: true},
		{name: "ctrl-c forgets an unseen line", before: line{text: "pri", unseen: true}, keys: []string{"ctrl-c", "enter"}, wantJudged: "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := tt.before.apply(tt.input, tt.keys)
			if w.judge != tt.wantJudge || w.unseen != tt.wantUnseen || (tt.wantJudge && w.judged != tt.wantJudged) {
				t.Errorf("apply(%q, %q) on %+v = judge %v unseen %v %q; want judge %v unseen %v %q",
					tt.input, tt.keys, tt.before, w.judge, w.unseen, w.judged, tt.wantJudge, tt.wantUnseen, tt.wantJudged)
			}
			if w.next.text != tt.wantNext {
				t.Errorf("apply(%q, %q) leaves %q typed, want %q", tt.input, tt.keys, w.next.text, tt.wantNext)
			}
		})
	}
}

// startPTY starts command as a pty task and waits until the program
// reading its terminal is want (its base name) and, for an interactive
// program, its prompt shows (it may flush what is typed before).
func startPTY(t *testing.T, f *fixture, command, want string) *task {
	t.Helper()
	res, err := f.m.Run(f.ctx(t.Context()), RunRequest{Command: command, Mode: ModePTY, Yield: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("Run(%q): %v", command, err)
	}
	d := data(t, res)
	if d.Status != "running" {
		t.Fatalf("Run(%q) = %q, want a running task", command, res.Text)
	}
	tk, err := f.m.lookup(f.ctx(t.Context()), d.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		fg := tk.foreground()
		tail := tk.peekTail()
		prompted := !strings.Contains(command, " -i") || strings.HasSuffix(tail, ">>> ") || strings.HasSuffix(tail, "$ ")
		if strings.HasPrefix(filepath.Base(fg.program), want) && prompted {
			return tk
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %q: foreground %+v, want %s", command, fg, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
}

// TestForeground_IdentifiesTheReader: the program a terminal task's input
// reaches, and whether it is a shell, by the file it runs.
func TestForeground_IdentifiesTheReader(t *testing.T) {
	t.Parallel()
	needPython(t)
	f := newFixture(t, Options{})
	copied := filepath.Join(t.TempDir(), "bash")
	py, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(strings.TrimSpace(string(py)))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copied, b, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, command, want string
		shell, reading      bool
	}{
		{name: "bash at a read", command: "read -r x; echo $x", want: "bash", shell: true, reading: true},
		{name: "an interactive bash", command: "PS1='$ ' bash --norc --noprofile -i", want: "bash", shell: true, reading: true},
		{name: "an interpreter bash execs", command: "python3 -q -i", want: "python", reading: true},
		{name: "an interpreter in bash's own group", command: "cd . && python3 -q -i; true", want: "python", reading: true},
		{name: "a program under a shell's name", command: copied + " -q -i", want: "bash", reading: true},
		{name: "cat", command: "cat", want: "cat", reading: true},
		{name: "a program that reads nothing", command: "sleep 30", want: "sleep"},
		{name: "bash waiting for a command it started", command: "setsid -w sleep 30; true", want: "bash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk := startPTY(t, f, tt.command, tt.want)
			defer tk.cancel(errShellCancel)
			// Bounded: a command may pass through a moment of the other kind
			// while it starts.
			deadline := time.Now().Add(3 * time.Second)
			fg := tk.foreground()
			for (fg.shell != tt.shell || fg.reading != tt.reading || fg.dir == "") && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
				fg = tk.foreground()
			}
			if fg.shell != tt.shell || fg.reading != tt.reading || fg.dir == "" {
				t.Errorf("foreground of %q = %+v, want shell=%v reading=%v and its folder", tt.command, fg, tt.shell, tt.reading)
			}
		})
	}
}

// TestWriteStdin_NothingTypedWithoutApproval: refused input never reaches
// the program, and the request says what it would have read.
func TestWriteStdin_NothingTypedWithoutApproval(t *testing.T) {
	t.Parallel()
	needPython(t)
	tests := []struct {
		name string
		resp sdk.ApprovalResponse
		code string
	}{
		{name: "refused", resp: sdk.ApprovalResponse{Reason: "no"}, code: sdk.CodeDenied},
		{name: "nobody to ask", resp: sdk.ApprovalResponse{Reason: "nobody", Unanswered: true}, code: sdk.CodeNeedsAuth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, Options{})
			tk := startPTY(t, f, "python3 -q -i", "python")
			defer tk.cancel(errShellCancel)
			f.host.mu.Lock()
			f.host.refuse = &tt.resp
			f.host.mu.Unlock()
			_, err := f.m.WriteStdin(f.ctx(t.Context()), tk.id, `print("MARK" + "ER")`, []string{"enter"})
			if te, ok := sdk.AsToolError(err); !ok || te.Code != tt.code || !strings.Contains(te.Message, "nothing was written") {
				t.Fatalf("WriteStdin = %v, want %s saying nothing was written", err, tt.code)
			}
			asked := f.host.asked()
			if len(asked) != 1 || asked[0].Kind != sdk.ApprovalStdin || asked[0].Shell || asked[0].Ahead != "" || asked[0].Input != `print("MARK" + "ER")` ||
				!strings.Contains(filepath.Base(asked[0].Program), "python") || asked[0].TaskID != tk.id {
				t.Fatalf("approvals = %+v, want one stdin request for python", asked)
			}
			// Whatever else happens, the interpreter never read the line.
			f.host.mu.Lock()
			f.host.refuse = nil
			f.host.mu.Unlock()
			w, err := f.m.WriteStdin(f.ctx(t.Context()), tk.id, "", []string{"ctrl-d"})
			if err != nil {
				t.Fatal(err)
			}
			all := w.Text
			if data(t, w).Status == "running" {
				rest, _ := collect(t, f, tk.id)
				all += rest
			}
			if strings.Contains(all, "MARKER") {
				t.Errorf("the refused input ran: %q", all)
			}
		})
	}
}

// TestWriteStdin_ShellLineJudgedWhole: a shell gets its whole line judged,
// keys alone ask nobody.
func TestWriteStdin_ShellLineJudgedWhole(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	tk := startPTY(t, f, "PS1='$ ' bash --norc --noprofile -i", "bash")
	defer tk.cancel(errShellCancel)
	ctx := f.ctx(t.Context())
	if _, err := f.m.WriteStdin(ctx, tk.id, "echo spl", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.WriteStdin(ctx, tk.id, "it", []string{"enter"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.WriteStdin(ctx, tk.id, "", []string{"ctrl-c"}); err != nil {
		t.Fatal(err)
	}
	asked := f.host.asked()
	if len(asked) != 2 || asked[1].Input != "echo split\n" || !asked[1].Shell || asked[1].Dir == "" {
		t.Fatalf("approvals = %+v, want two, the second for the whole line of the shell", asked)
	}
}

// TestWriteStdin_TextAheadOfAReader: text typed while no program reads it
// waits in the terminal; it is sent as ahead while it grows, and the shell
// that reads it next has it judged as the start of its line.
func TestWriteStdin_TextAheadOfAReader(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	tk := startPTY(t, f, `sleep 1.5; read -r line; echo "got $line"`, "sleep")
	defer tk.cancel(errShellCancel)
	ctx := f.ctx(t.Context())
	for _, in := range []string{"print", "env X"} {
		if _, err := f.m.WriteStdin(ctx, tk.id, in, nil); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for !tk.foreground().shell {
		if time.Now().After(deadline) {
			t.Fatal("bash never took the terminal back")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := f.m.WriteStdin(ctx, tk.id, "", []string{"enter"}); err != nil {
		t.Fatal(err)
	}
	asked := f.host.asked()
	if len(asked) != 3 || asked[0].Shell || asked[0].Ahead != "print" || asked[1].Ahead != "printenv X" {
		t.Fatalf("approvals = %+v, want two for sleep carrying the text ahead, print then printenv X", asked)
	}
	if !asked[2].Shell || asked[2].Input != "printenv X\n" {
		t.Errorf("approval for bash = %+v, want the line it reads: printenv X", asked[2])
	}
}

// TestWriteStdin_ReaderChangedWhileAsked: input approved for one reader is
// not typed into another. While the question waits, the interpreter it was
// asked for exits and the shell behind it runs on; nothing is written.
func TestWriteStdin_ReaderChangedWhileAsked(t *testing.T) {
	t.Parallel()
	needPython(t)
	f := newFixture(t, Options{})
	tk := startPTY(t, f, "python3 -q -i; exec sleep 30", "python")
	defer tk.cancel(errShellCancel)
	py := tk.foreground().pgrp
	f.host.mu.Lock()
	f.host.during = func() {
		_ = syscall.Kill(-py, syscall.SIGKILL)
		deadline := time.Now().Add(10 * time.Second)
		for tk.foreground().pgrp == py && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	f.host.mu.Unlock()
	_, err := f.m.WriteStdin(f.ctx(t.Context()), tk.id, "print(1)", []string{"enter"})
	if te, ok := sdk.AsToolError(err); !ok || !strings.Contains(te.Message, "changed while the input waited") {
		t.Fatalf("WriteStdin = %v, want nothing written: the reader changed while asked", err)
	}
}
