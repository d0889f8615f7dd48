package runner

import "testing"

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
		{"node", true},
		{"FOO=1 env BAR=2 python3", true},
		{"sqlite3 app.db", true},
		{"git rebase -i HEAD~3", true},
		{"python3 script.py", false},
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
