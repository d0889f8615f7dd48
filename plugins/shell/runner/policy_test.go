package runner

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yagent/yagent/policy"
)

func TestNeedsTerminal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line string
		want bool
	}{
		{"sudo apt-get install x", true},
		{"ssh host uptime", true},
		{"vim main.go", true},
		{"git log | less", true},
		{"top", true},
		{"python3", true},
		{"python3 -i", true},
		{"python3 -i x.py", true},
		{"python3 \"$script\"", true},
		{"bash -lc 'python3 -i'", true},
		{"uv run python3", true},
		{"stdbuf -o L python3", true},
		{"git -C sub rebase -i main", true},
		{"node", true},
		{"FOO=1 env BAR=2 python3", true},
		{"sqlite3 app.db", true},
		{"git rebase -i HEAD~3", true},
		{"python3 script.py", false},
		{"node -i x.js", false},
		{"command -v python3", false},
		{"redis-cli PING", false},
		{"echo hi | bash -c python3", false},
		{"python3 -c 'print(1)'", false},
		{"python3 -m pytest", false},
		{"echo 'print(1)' | python3", false},
		{"python3 < input.py", false},
		{"node -e 'console.log(1)'", false},
		{"sqlite3 app.db 'select 1'", false},
		{"bash -c 'echo hi'", false},
		{"bash script.sh", false},
		{"emacs --batch -l x.el", false},
		{"read -p 'name? ' n; echo $n", false},
		{"ls -la", false},
		{"go test ./...", false},
		{"if true; then (cd x && sudo make install); fi", true},
		{"echo 'unterminated", false},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			t.Parallel()
			if got := NeedsTerminal(tt.line); got != tt.want {
				t.Errorf("NeedsTerminal(%q) = %v, want %v", tt.line, got, tt.want)
			}
		})
	}
}

// TestNeedsTerminal_Corpus: the command classifier's corpus (see its
// header): mode auto picks a PTY on a line's P, and a program of the line
// wants a terminal whatever its stdin on its T.
func TestNeedsTerminal_Corpus(t *testing.T) {
	t.Parallel()
	f, err := os.Open(filepath.Join("..", "..", "..", "policy", "testdata", "commands.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	cases := 0
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if len(l) < 9 {
			t.Fatalf("commands.txt:%d: want \"R P T F  command\", got %q", n, l)
		}
		cases++
		line, pty, term := strings.TrimSpace(l[8:]), l[2] == 'P', l[4] == 'T'
		if got := NeedsTerminal(line); got != pty {
			t.Errorf("commands.txt:%d: NeedsTerminal(%q) = %v, want %v", n, line, got, pty)
		}
		cmds, _ := simpleCommands(line)
		got := false
		for _, c := range cmds {
			got = got || c.args[0].Static && policy.WantsTerminal(path.Base(c.args[0].Text), c.words()[1:])
		}
		if got != term {
			t.Errorf("commands.txt:%d: a program of %q wants a terminal = %v, want %v", n, line, got, term)
		}
	}
	if err := sc.Err(); err != nil || cases < 60 {
		t.Fatalf("read %d lines of the corpus (%v), want at least 60", cases, err)
	}
}

func TestLooksLikeServer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line string
		want bool
	}{
		{"npm run dev", true},
		{"npm start", true},
		{"yarn dev", true},
		{"pnpm run serve", true},
		{"vite", true},
		{"npx vite --port 3000", true},
		{"python -m http.server 8000", true},
		{"python3 manage.py runserver", true},
		{"tail -f app.log", true},
		{"tail -n 50 -F app.log", true},
		{"watch -n 1 ls", true},
		{"cd web && npm run dev", true},
		{"nohup uvicorn app:app", true},
		{"tsc --watch", true},
		{"bash -lc 'npm run dev'", true},
		{"uv run uvicorn app:app", true},
		{"jest --watch", true},
		{"docker compose up", true},
		{"docker compose up -d", false},
		{"kubectl logs -f pod", true},
		{"ping -c 3 localhost", false},
		{"vite build", false},
		{"npm install", false},
		{"npm run build", false},
		{"npm test", false},
		{"tail -n 20 app.log", false},
		{"python3 script.py", false},
		{"node -i x.js", false},
		{"command -v python3", false},
		{"redis-cli PING", false},
		{"echo hi | bash -c python3", false},
		{"go test ./...", false},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			t.Parallel()
			if got := LooksLikeServer(tt.line); got != tt.want {
				t.Errorf("LooksLikeServer(%q) = %v, want %v", tt.line, got, tt.want)
			}
		})
	}
}

func TestDiagnose(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mode   string
		server bool
		tail   string
		want   string
	}{
		{"password prompt", ModePTY, false, "Connecting...\n[sudo] password for me: ", DiagPrompt},
		{"yes/no", ModePipe, false, "Proceed? [y/N] ", DiagPrompt},
		{"network", ModePipe, false, "fetching\ncurl: (6) Could not resolve host: example.com\n", DiagNetwork},
		{"npm retry", ModePipe, false, "npm WARN retrying in 10 seconds\n", DiagNetwork},
		{"server output", ModePipe, false, "  VITE v5  ready in 300 ms\n  Local:   http://localhost:5173/\n", DiagServer},
		{"server command", ModePipe, true, "", DiagServer},
		{"working", ModePipe, false, "compiling 3/10\n", DiagWorking},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk := &task{mode: tt.mode, server: tt.server, timeout: DefaultTimeout, done: make(chan struct{})}
			if got := diagnose(tk, tt.tail); got.Kind != tt.want {
				t.Errorf("diagnose(%q) = %q (%s), want %q", tt.tail, got.Kind, got.Text, tt.want)
			}
		})
	}
}
