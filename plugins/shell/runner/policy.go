package runner

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The transports a command runs on.
const (
	ModeAuto = "auto"
	ModePipe = "pipe"
	ModePTY  = "pty"
)

// simpleCmd is one simple command of a command line: its literal words
// (a word that is not a plain literal is "") and whether its stdin is the
// call's own, not a pipe or a redirection.
type simpleCmd struct {
	args      []string
	ownsStdin bool
}

// simpleCommands parses line as bash and returns its simple commands, with
// wrappers such as env, nohup, time, nice and timeout stripped. ok is false
// when the line does not parse.
func simpleCommands(line string) (cmds []simpleCmd, ok bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return nil, false
	}
	var visit func(stmts []*syntax.Stmt, ownsStdin bool)
	var visitStmt func(s *syntax.Stmt, ownsStdin bool)
	visit = func(stmts []*syntax.Stmt, ownsStdin bool) {
		for _, s := range stmts {
			visitStmt(s, ownsStdin)
		}
	}
	visitStmt = func(s *syntax.Stmt, ownsStdin bool) {
		if s == nil {
			return
		}
		for _, r := range s.Redirs {
			switch r.Op {
			case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
				if r.N == nil || r.N.Value == "0" {
					ownsStdin = false
				}
			}
		}
		switch c := s.Cmd.(type) {
		case *syntax.CallExpr:
			args := make([]string, len(c.Args))
			for i, w := range c.Args {
				args[i] = literal(w)
			}
			if args = stripWrappers(args); len(args) > 0 {
				cmds = append(cmds, simpleCmd{args: args, ownsStdin: ownsStdin})
			}
		case *syntax.BinaryCmd:
			visitStmt(c.X, ownsStdin)
			visitStmt(c.Y, ownsStdin && c.Op != syntax.Pipe && c.Op != syntax.PipeAll)
		case *syntax.Block:
			visit(c.Stmts, ownsStdin)
		case *syntax.Subshell:
			visit(c.Stmts, ownsStdin)
		case *syntax.TimeClause:
			visitStmt(c.Stmt, ownsStdin)
		case *syntax.IfClause:
			for ic := c; ic != nil; ic = ic.Else {
				visit(ic.Cond, ownsStdin)
				visit(ic.Then, ownsStdin)
			}
		case *syntax.WhileClause:
			visit(c.Cond, ownsStdin)
			visit(c.Do, ownsStdin)
		case *syntax.ForClause:
			visit(c.Do, ownsStdin)
		case *syntax.CaseClause:
			for _, it := range c.Items {
				visit(it.Stmts, ownsStdin)
			}
		case *syntax.FuncDecl:
			visitStmt(c.Body, ownsStdin)
		case *syntax.CoprocClause:
			visitStmt(c.Stmt, false)
		}
	}
	visit(f.Stmts, true)
	return cmds, true
}

// literal returns w's value when it is made of literals and quoted
// literals only, else "".
func literal(w *syntax.Word) string {
	var sb strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			sb.WriteString(p.Value)
		case *syntax.SglQuoted:
			sb.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return ""
				}
				sb.WriteString(l.Value)
			}
		default:
			return ""
		}
	}
	return sb.String()
}

// stripWrappers drops the programs that only run another one (env, nohup,
// time, nice, timeout, stdbuf, command, exec, builtin) with their options.
func stripWrappers(args []string) []string {
	for len(args) > 0 {
		switch path.Base(args[0]) {
		case "env":
			args = args[1:]
			for len(args) > 0 && (strings.HasPrefix(args[0], "-") || strings.Contains(args[0], "=")) {
				args = args[1:]
			}
		case "nohup", "command", "exec", "builtin", "time", "stdbuf", "setsid":
			args = args[1:]
			for len(args) > 0 && strings.HasPrefix(args[0], "-") {
				args = args[1:]
			}
		case "nice", "ionice":
			args = args[1:]
			for len(args) > 0 && strings.HasPrefix(args[0], "-") {
				if args[0] == "-n" && len(args) > 1 {
					args = args[1:]
				}
				args = args[1:]
			}
		case "timeout":
			args = args[1:]
			for len(args) > 0 && strings.HasPrefix(args[0], "-") {
				if (args[0] == "-s" || args[0] == "-k") && len(args) > 1 {
					args = args[1:]
				}
				args = args[1:]
			}
			if len(args) > 0 {
				args = args[1:] // the duration
			}
		default:
			return args
		}
	}
	return args
}

// terminalPrograms always want a terminal: they prompt for passwords or
// draw the screen.
var terminalPrograms = []string{
	"sudo", "su", "doas", "ssh", "mosh", "passwd", "telnet", "ftp", "sftp",
	"vim", "vi", "nvim", "nano", "pico", "emacs", "less", "more", "most",
	"top", "htop", "btop", "atop", "man", "screen", "tmux", "visudo", "vipw",
}

// replPrograms start an interactive prompt when run with no script,
// expression or input of their own.
var replPrograms = []string{
	"python", "python2", "python3", "ipython", "node", "deno", "bun", "irb",
	"pry", "ghci", "lua", "luajit", "R", "julia", "erl", "iex", "scala",
	"clojure", "clj", "racket", "guile", "ocaml", "utop", "php", "bash",
	"sh", "zsh", "fish", "dash", "ksh", "sqlite3", "psql", "mysql", "mongosh",
	"redis-cli", "gdb", "lldb",
}

// notInteractiveFlags give a REPL program something to run instead of a
// prompt.
var notInteractiveFlags = []string{
	"-c", "-e", "-m", "-p", "-f", "-x", "--eval", "--print", "--command",
	"--execute", "--file", "--version", "-V", "-v", "-h", "--help", "--check",
	"-batch", "--batch", "--script", "-r", "run", "exec",
}

// NeedsTerminal reports whether mode auto runs line under a PTY: a program
// that prompts for a password or draws the screen, or a REPL started bare
// with the call's stdin. What a script will ask at run time (`read -p`)
// cannot be known from the line: such commands run on pipes unless the
// caller asks for mode pty.
func NeedsTerminal(line string) bool {
	cmds, ok := simpleCommands(line)
	if !ok {
		return false
	}
	for _, c := range cmds {
		prog := path.Base(c.args[0])
		args := c.args[1:]
		switch {
		case prog == "emacs" && slices.ContainsFunc(args, func(a string) bool { return a == "--batch" || a == "-batch" || a == "--script" }):
		case prog == "git" && gitInteractive(args):
			return true
		case slices.Contains(terminalPrograms, prog):
			return true
		case c.ownsStdin && slices.Contains(replPrograms, prog) && bareREPL(prog, args):
			return true
		}
	}
	return false
}

func bareREPL(prog string, args []string) bool {
	operands := 0
	for _, a := range args {
		if slices.Contains(notInteractiveFlags, a) {
			return false
		}
		if a == "" || !strings.HasPrefix(a, "-") {
			operands++
		}
	}
	switch prog {
	case "sqlite3":
		return operands <= 1 // a database, no SQL
	case "psql", "mysql", "redis-cli", "mongosh":
		return operands <= 1
	case "deno", "bun":
		return operands == 0 || operands == 1 && slices.Contains(args, "repl")
	case "php":
		return slices.Contains(args, "-a")
	}
	return operands == 0
}

func gitInteractive(args []string) bool {
	sub := firstOperand(args)
	switch sub {
	case "add", "checkout", "reset", "restore", "stash":
		return slices.ContainsFunc(args, func(a string) bool { return a == "-p" || a == "--patch" || a == "-i" || a == "--interactive" })
	case "rebase":
		return slices.ContainsFunc(args, func(a string) bool { return a == "-i" || a == "--interactive" })
	}
	return false
}

func firstOperand(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// serverPrograms run until stopped: dev servers, watchers, followers.
var serverPrograms = []string{
	"nodemon", "http-server", "live-server", "webpack-dev-server", "uvicorn",
	"gunicorn", "hypercorn", "daphne", "watchexec", "json-server",
	"browser-sync", "serve", "redis-server", "mongod", "ngrok", "watch",
	"sphinx-autobuild",
}

// serverSubcommands maps a program to the first operands that make it run
// until stopped.
var serverSubcommands = map[string][]string{
	"npm":  {"start", "dev", "serve", "watch", "preview", "develop"},
	"yarn": {"start", "dev", "serve", "watch", "preview", "develop"},
	"pnpm": {"start", "dev", "serve", "watch", "preview", "develop"},
	"bun":  {"start", "dev", "serve", "watch", "preview", "develop"},
	"ng":   {"serve"}, "next": {"dev", "start"}, "nuxt": {"dev"}, "astro": {"dev"},
	"gatsby": {"develop"}, "remix": {"dev"}, "hugo": {"server", "serve"},
	"jekyll": {"serve", "s"}, "rails": {"server", "s"}, "flask": {"run"},
	"mkdocs": {"serve"}, "wrangler": {"dev"}, "streamlit": {"run"},
	"jupyter": {"notebook", "lab"}, "cargo": {"watch"},
	"firebase": {"serve", "emulators:start"}, "django-admin": {"runserver"},
	"caddy": {"run"}, "air": {""},
}

// LooksLikeServer reports whether line starts something that runs until it
// is stopped: a dev server, a file watcher, a log follower.
func LooksLikeServer(line string) bool {
	cmds, ok := simpleCommands(line)
	if !ok {
		return false
	}
	for _, c := range cmds {
		if serverCommand(c.args) {
			return true
		}
	}
	return false
}

func serverCommand(args []string) bool {
	// Package runners: npx vite, pnpm exec vite, bunx serve.
	switch path.Base(args[0]) {
	case "npx", "pnpx", "bunx":
		rest := args[1:]
		for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
			rest = rest[1:]
		}
		if len(rest) > 0 {
			return serverCommand(rest)
		}
		return false
	}
	prog := path.Base(args[0])
	rest := args[1:]
	if slices.Contains(rest, "--watch") {
		return true
	}
	if slices.Contains(serverPrograms, prog) {
		return true
	}
	sub := firstOperand(rest)
	switch prog {
	case "npm", "yarn", "pnpm", "bun":
		if sub == "run" || sub == "run-script" {
			i := slices.Index(rest, sub)
			sub = firstOperand(rest[i+1:])
		}
	case "python", "python3", "python2":
		if i := slices.Index(rest, "-m"); i >= 0 && i+1 < len(rest) {
			switch rest[i+1] {
			case "http.server", "SimpleHTTPServer", "uvicorn", "flask", "streamlit":
				return true
			}
		}
		return slices.Contains(rest, "runserver")
	case "php":
		return slices.Contains(rest, "-S")
	case "tail", "journalctl":
		return slices.ContainsFunc(rest, func(a string) bool {
			return a == "-f" || a == "-F" || a == "--follow" || strings.HasPrefix(a, "--follow=") ||
				strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "fF") && prog == "tail"
		})
	case "ping":
		return !slices.ContainsFunc(rest, func(a string) bool { return strings.HasPrefix(a, "-c") || strings.HasPrefix(a, "-w") })
	case "kubectl", "docker", "docker-compose", "podman":
		return containerFollow(prog, rest)
	case "vite":
		// Bare vite (with any options) is the dev server.
		return sub != "build" && sub != "optimize"
	case "vitest":
		return sub != "run" && sub != "bench" && !slices.Contains(rest, "--run")
	case "tsc", "jest", "webpack":
		return slices.Contains(rest, "-w") || slices.Contains(rest, "--watch")
	}
	if subs, ok := serverSubcommands[prog]; ok {
		return slices.Contains(subs, sub)
	}
	return false
}

func containerFollow(prog string, args []string) bool {
	follow := slices.ContainsFunc(args, func(a string) bool { return a == "-f" || a == "--follow" })
	detach := slices.ContainsFunc(args, func(a string) bool { return a == "-d" || a == "--detach" })
	sub := firstOperand(args)
	switch {
	case prog == "kubectl":
		return sub == "port-forward" || sub == "logs" && follow
	case sub == "logs":
		return follow
	case sub == "compose" || prog == "docker-compose":
		return slices.Contains(args, "up") && !detach
	}
	return false
}
