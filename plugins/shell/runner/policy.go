package runner

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/yagent/yagent/policy"
)

// The transports a command runs on.
const (
	ModeAuto = "auto"
	ModePipe = "pipe"
	ModePTY  = "pty"
)

// simpleCmd is one simple command of a command line: its words after
// the wrappers (policy.StripWrappers), the program first, and whether its
// stdin is the call's own, not a pipe or a redirection.
type simpleCmd struct {
	args      []policy.Arg
	ownsStdin bool
}

// words returns c's words, a word only known when the command runs as "".
func (c simpleCmd) words() []string {
	out := make([]string, len(c.args))
	for i, a := range c.args {
		if a.Static {
			out[i] = a.Text
		}
	}
	return out
}

// maxScriptDepth bounds the shell -c scripts simpleCommands reads into.
const maxScriptDepth = 8

// simpleCommands parses line as bash and returns its simple commands, with
// wrappers such as env, nohup, time, nice and timeout stripped, and those
// of the scripts a shell runs with -c (bash -c 'python3'). ok is false
// when the line does not parse.
func simpleCommands(line string) (cmds []simpleCmd, ok bool) {
	return parseCommands(line, true, 0)
}

func parseCommands(line string, ownsStdin bool, depth int) (cmds []simpleCmd, ok bool) {
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
			args := make([]policy.Arg, len(c.Args))
			for i, w := range c.Args {
				args[i].Text, args[i].Static = literal(w)
			}
			if args = policy.StripWrappers(args); len(args) == 0 {
				return
			}
			cmds = append(cmds, simpleCmd{args: args, ownsStdin: ownsStdin})
			if script, ok := policy.ShellScript(args[0].Text, args[1:]); ok && script.Static && args[0].Static && depth < maxScriptDepth {
				inner, _ := parseCommands(script.Text, ownsStdin, depth+1)
				cmds = append(cmds, inner...)
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
	visit(f.Stmts, ownsStdin)
	return cmds, true
}

// literal returns w's value and true when it is made of literals and
// quoted literals only, else "" and false: a word only known when the
// command runs.
func literal(w *syntax.Word) (string, bool) {
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
					return "", false
				}
				sb.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return sb.String(), true
}

// NeedsTerminal reports whether mode auto runs line under a PTY: a program
// that prompts for a password or draws the screen (policy.WantsTerminal),
// or a REPL started with the call's stdin (policy.Interactive, the
// guard's own test for an interactive ask rule). What a script will ask
// at run time (`read -p`) cannot be known from the line: such commands
// run on pipes unless the caller asks for mode pty.
func NeedsTerminal(line string) bool {
	cmds, ok := simpleCommands(line)
	if !ok {
		return false
	}
	for _, c := range cmds {
		if !c.args[0].Static {
			continue
		}
		prog := path.Base(c.args[0].Text)
		switch {
		case policy.WantsTerminal(prog, c.words()[1:]):
			return true
		case c.ownsStdin && policy.Interpreter(prog) && policy.Interactive(prog, c.args[1:]):
			return true
		}
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
		if serverCommand(c.words()) {
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
