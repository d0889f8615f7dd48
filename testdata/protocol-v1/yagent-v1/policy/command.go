package policy

import (
	"path"
	"slices"
	"sort"
	"strings"
)

// Arg is one word of a command line as the command classifier reads it.
type Arg struct {
	// Text is the word after quote removal, as far as it is known.
	Text string
	// Static says the whole word is known when the line is parsed; a word
	// with a part only known when the command runs could be anything.
	Static bool
}

// StaticArgs returns words as Args known when the line is parsed.
func StaticArgs(words ...string) []Arg {
	out := make([]Arg, len(words))
	for i, w := range words {
		out[i] = Arg{Text: w, Static: true}
	}
	return out
}

// interpSpec says how an interpreter's arguments tell a script run from
// an interactive session (a REPL reads what the model types next, which no
// rule sees).
type interpSpec struct {
	// values are the short options that take a value (-W arg, -Iinc).
	values string
	// longValues are the long options that take a value as the next word.
	longValues []string
	// code are the options whose value is the program (-c, -e): the
	// interpreter runs it and exits. Options that print something and
	// exit (-v, --version) are listed here too.
	code []string
	// repl are the options that start the REPL whatever else is given.
	repl []string
	// operands is how many operands make a run non-interactive: 1 for a
	// script file; 2 for sqlite3 DB SQL; 0 when operands never do (psql
	// DBNAME, gdb PROG).
	operands int
	// oneDash says the long options take one dash (-batch, -cmd).
	oneDash bool
	// always says the program is a REPL whatever its arguments (but
	// --version and --help).
	always bool
	// loops are the short options that run the code once per input line
	// (perl -n, -p): with no file operand the input is the terminal.
	loops string
	// codeEnds says a code option ends the interpreter's options: the
	// words after its value are the program's (python3 -c CODE -i).
	codeEnds bool
	// scriptFirst says a script operand wins over the REPL options: node
	// -i x.js runs x.js and exits.
	scriptFirst bool
	// replWords are the first operands that name the REPL subcommand
	// (deno repl, bun repl, scala repl).
	replWords []string
	// usage says the program alone prints its usage and exits (bun): only
	// a REPL option or word starts its REPL.
	usage bool
	// scripts, when set, are the endings of the operands that are scripts
	// to run (mongosh's other operand is the database's address).
	scripts []string
	// objects are the endings of the operands loaded before the REPL
	// starts, not run as the script (ocaml lib.cma).
	objects []string
	// shell says the arguments are read as a POSIX shell reads them (see
	// ReadShell): values then holds the letters whose option takes the
	// next word (bash -o errexit), code the options that print and exit.
	shell bool
}

// interpreters are the programs with a REPL: the built-in profiles' ask
// rules with interactive: true name most of them, and mode auto runs any
// of them started bare under a PTY. An admin may name another in a rule
// (unknown ones: no operand is interactive).
var interpreters = map[string]interpSpec{
	"python":  pythonSpec,
	"python2": pythonSpec,
	"python3": pythonSpec,
	"pypy":    pythonSpec,
	"pypy3":   pythonSpec,
	"ipython": {code: []string{"-c", "-m"}, repl: []string{"-i"}, operands: 1},
	"node":    nodeSpec,
	"nodejs":  nodeSpec,
	"deno":    {operands: 1, replWords: []string{"repl"}}, // deno and deno repl start the REPL; deno run x.ts, deno x.ts, deno eval run code
	"bun":     {code: []string{"-e", "--eval", "-p", "--print"}, operands: 1, replWords: []string{"repl"}, usage: true},
	"perl":    {values: "IMmlx0", code: []string{"-e", "-E", "-v", "-c"}, repl: []string{"-d"}, operands: 1, loops: "np"},
	"ruby":    {values: "IrCEFKTUWx", code: []string{"-e", "-v", "-h"}, operands: 1, loops: "np"},
	"irb":     {values: "rIE", longValues: []string{"context-mode", "prompt", "prompt-mode", "back-trace-limit"}, code: []string{"-v", "-h"}, operands: 1}, // irb x.rb reads x.rb, not the terminal
	"pry":     {always: true},
	"php":     {values: "cdnzf", code: []string{"-r", "-B", "-R", "-F", "-E", "-v", "-h", "-i", "-m", "-l"}, repl: []string{"-a"}, operands: 1},
	"lua":     luaSpec,
	"luajit":  luaSpec,
	"lua5.4":  luaSpec,
	"R":       {code: []string{"-e", "-f", "--file"}, longValues: []string{"file"}, operands: 0},
	"julia":   {values: "LtpJC", code: []string{"-e", "-E"}, repl: []string{"-i"}, operands: 1},
	"ghci":    {oneDash: true, code: []string{"-e"}, operands: 0}, // ghci x.hs loads x.hs into the REPL; -e evaluates and exits
	"sqlite3": {oneDash: true, longValues: []string{"cmd", "separator", "nullvalue", "newline", "init", "mmap", "vfs", "lookaside", "pagecache", "heap", "maxsize", "zip", "deserialize"}, repl: []string{"-interactive"}, operands: 2},
	"psql":    {values: "dhpUvPTFRLoWS", longValues: []string{"dbname", "host", "port", "username", "set", "variable", "pset", "output", "log-file"}, code: []string{"-c", "-f", "--command", "--file", "-l", "--list"}, operands: 0},
	"mysql":   mysqlSpec,
	"mariadb": mysqlSpec,
	"gdb":     {oneDash: true, longValues: []string{"ex", "x", "p", "ix", "iex", "cd", "d", "directory", "pid", "core", "c", "s", "symbols", "se", "e", "exec"}, code: []string{"-batch", "--batch", "-version", "--version"}, operands: 0},
	"lldb":    {code: []string{"-b", "--batch"}, values: "osOSpnkKaA", operands: 0},
	"tclsh":   {operands: 1},
	"guile":   {code: []string{"-c", "-s"}, values: "Lxl", operands: 1},
	"jshell":  {always: true},
	// erl's plain operands are arguments for the program, never a script:
	// only -noshell (or -noinput, -detached) keeps the shell from starting.
	"erl": {oneDash: true, code: []string{"-noshell", "-noinput", "-detached"}, operands: 0},
	// iex is the Elixir shell: a script or -e runs before its prompt.
	"iex": {code: []string{"-v", "-h"}, operands: 0},
	// scala (3.5 and later: Scala CLI) runs its inputs, and starts the
	// REPL with none or with repl; Scala 2's -i preloads a file into it.
	"scala": {values: "SOJMr", longValues: []string{"scala", "scala-version", "dep", "dependency", "jvm", "java-opt", "scala-opt", "scalac-option", "main-class", "repository", "toolkit", "classpath", "cp", "extra-jars", "jar", "jars", "compiler-plugin", "platform", "java-home"},
		code: []string{"-e", "--execute-script", "--execute-scala", "--execute-java", "-version", "-help"}, repl: []string{"-i"}, operands: 1, replWords: []string{"repl"}},
	"clojure": clojureSpec,
	"clj":     clojureSpec,
	// racket runs its first operand as a module, -e/-f/-t/-l/-r/-u and
	// the like without a REPL; -i adds it back.
	"racket": {values: "IXGASRWONL", longValues: []string{"collects", "config", "syslog", "stderr", "stdout"},
		code: []string{"-e", "--eval", "-f", "--load", "-t", "--require", "-l", "--lib", "-p", "-r", "--script", "-u", "--require-script", "-k", "-m", "--main", "-v", "--version", "-h", "--help"},
		repl: []string{"-i", "--repl"}, operands: 1},
	"ocaml": ocamlSpec,
	"utop":  ocamlSpec,
	// mongosh's first operand is the database's address; a .js operand
	// (or --eval, --file) runs, then exits unless --shell.
	"mongosh": {values: "upf", longValues: []string{"host", "port", "username", "password", "authenticationDatabase", "authenticationMechanism", "apiVersion", "tlsCAFile", "tlsCertificateKeyFile", "file", "eval"},
		code: []string{"--eval", "-f", "--file", "-h", "--help", "--build-info"}, repl: []string{"--shell"}, operands: 1, scripts: []string{".js", ".mjs", ".cjs"}},
	// redis-cli runs the command its operands name; --pipe reads commands
	// from standard input and --ldb debugs a script at a prompt.
	"redis-cli": {values: "hpstaurinDdX", longValues: []string{"user", "pass", "pattern", "quoted-pattern", "count", "eval", "cacert", "cacertdir", "cert", "key", "sni", "tls-ciphers", "tls-ciphersuites", "rdb", "functions-rdb", "pipe-timeout", "intrinsic-latency", "memkeys-samples"},
		code: []string{"--eval", "--stat", "--latency", "--latency-history", "--latency-dist", "--bigkeys", "--memkeys", "--hotkeys", "--keystats", "--scan", "--rdb", "--functions-rdb", "--replica", "--lru-test", "--intrinsic-latency", "--cluster", "-v"},
		repl: []string{"--pipe", "--ldb", "--ldb-sync-mode"}, operands: 1},
	"bash":  posixShell,
	"sh":    posixShell,
	"dash":  posixShell,
	"ash":   posixShell,
	"ksh":   posixShell,
	"mksh":  posixShell,
	"yash":  posixShell,
	"rbash": posixShell,
	"zsh":   posixShell,
	"fish":  {shell: true, values: "Cdopf", code: []string{"-v", "-h", "--version", "--help"}},
	// Shells of other syntaxes: each runs -c's string, a script operand,
	// or its standard input.
	"csh":    posixShell,
	"tcsh":   posixShell,
	"xonsh":  posixShell,
	"elvish": posixShell,
	"nu":     posixShell,
	"pwsh":   posixShell,
}

// longCodeValues are the long code options whose value is the next word.
var longCodeValues = []string{"--eval", "--print", "--command", "--execute", "--file"}

// replModules start a REPL when run with -m (python3 -m code).
var replModules = []string{"code", "asyncio", "pdb", "IPython", "ptpython", "bpython", "idlelib", "idlelib.idle", "sqlite3", "uvicorn.__main__"}

// terminalReads are what a -c/-e program reads its input with: run with
// the terminal as its standard input, it is a REPL of its own making
// (python3 -c "while 1: exec(input())").
var terminalReads = []string{"input(", "stdin", "STDIN", "interact", "repl", "readline", "gets", "io.read", "<>", "fgets", "readLine", "Console.Read"}

// readsTerminal reports a code option whose program reads standard input
// or starts a REPL.
func readsTerminal(opt, code string) bool {
	if opt == "-m" {
		return slices.Contains(replModules, code)
	}
	for _, r := range terminalReads {
		if strings.Contains(code, r) {
			return true
		}
	}
	return false
}

// exitOptions print something and exit, given as the first argument.
// Not -h (psql -h HOST) nor -v (python3 -v is a verbose REPL): those are
// per interpreter, in its code options.
var exitOptions = []string{"--version", "--help", "-version", "-help", "-V", "-?"}

var (
	pythonSpec = interpSpec{values: "WXQ", longValues: []string{"check-hash-based-pycs"}, code: []string{"-c", "-m", "-h"}, repl: []string{"-i"}, operands: 1, codeEnds: true}
	nodeSpec   = interpSpec{values: "rC", longValues: []string{"require", "import", "loader", "conditions", "env-file", "inspect-port", "title", "input-type"},
		code: []string{"-e", "--eval", "-p", "--print", "--test", "--check", "-c", "-v", "--version"}, repl: []string{"-i", "--interactive"}, operands: 1, scriptFirst: true}
	luaSpec   = interpSpec{values: "l", code: []string{"-e", "-v"}, repl: []string{"-i"}, operands: 1}
	mysqlSpec = interpSpec{values: "hPuDSe", longValues: []string{"host", "port", "user", "database", "socket"}, code: []string{"-e", "--execute"}, operands: 0}
	// clojure's -M:alias, -X:fn and -T:tool glue an alias to the option;
	// -X, -T and -P run a function or prepare, and exit.
	clojureSpec = interpSpec{oneDash: true, longValues: []string{"Sdeps", "Scp", "Sthreads", "i", "init"},
		code: []string{"-X", "-T", "-P", "-e", "--eval", "-m", "--main", "-Spath", "-Stree", "-Sdescribe", "--version", "-h", "--help"},
		repl: []string{"-r", "--repl"}, operands: 1}
	// ocaml FILE.ml runs the script; a compiled unit (lib.cma) is loaded
	// into the toplevel; -stdin reads the script from standard input.
	ocamlSpec = interpSpec{oneDash: true, longValues: []string{"I", "init", "open", "w", "warn-error", "alert", "ppx", "pp", "color", "error-style", "o"},
		code: []string{"-vnum", "-version", "-help", "--help"}, repl: []string{"-stdin"}, operands: 1, objects: []string{".cmo", ".cma", ".cmx", ".cmxa", ".cmxs"}}
	posixShell = interpSpec{shell: true, values: "oO", code: []string{"--version", "--help"}}
)

// Interpreter reports whether prog (a program's name or path) is one the
// command classifier knows to have a REPL.
func Interpreter(prog string) bool {
	_, ok := interpreters[path.Base(prog)]
	return ok
}

// Interpreters returns the names of the programs Interpreter knows, sorted.
func Interpreters() []string {
	names := make([]string, 0, len(interpreters))
	for n := range interpreters {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Interactive reports whether prog (a program's name or path) run with
// args starts its REPL, or reads its program from standard input (the
// terminal, when the call's standard input is its own). An argument only
// known when the command runs could be anything, so it counts. A program
// Interpreter does not know is interactive with no operand.
func Interactive(prog string, args []Arg) bool {
	spec, ok := interpreters[path.Base(prog)]
	if !ok {
		spec = interpSpec{operands: 1}
	}
	if len(args) > 0 && args[0].Static && slices.Contains(exitOptions, args[0].Text) {
		return false // --version, --help: prints and exits
	}
	if spec.always {
		return true
	}
	if spec.shell {
		sh := readShell(spec, args)
		return sh.Unknown || !sh.Exits && !sh.Command && (sh.Stdin || len(sh.Operands) == 0)
	}
	code, repl, loop, operands := false, false, false, 0
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.Static {
			return true
		}
		t := w.Text
		switch {
		case t == "-":
			return true // the program is read from standard input
		case t == "--":
			for _, o := range args[i+1:] {
				if spec.script(o.Text) {
					operands++
				}
			}
			i = len(args)
		case strings.HasPrefix(t, "--") || spec.oneDash && len(t) > 1 && t[0] == '-':
			opt, val, hasVal := strings.Cut(t, "=")
			if spec.oneDash {
				opt, _, _ = strings.Cut(opt, ":") // clojure -M:alias
			}
			name := strings.TrimLeft(opt, "-")
			takes := !hasVal && slices.Contains(spec.longValues, name)
			if slices.Contains(spec.code, opt) {
				code = true
				if !hasVal && i+1 < len(args) && (takes || slices.Contains(longCodeValues, opt)) {
					i++ // the code is the next word
					if !args[i].Static {
						return true
					}
					val = args[i].Text
					takes = false
				}
				repl = repl || readsTerminal(opt, val)
			}
			repl = repl || slices.Contains(spec.repl, opt)
			if takes {
				i++
			}
		case len(t) > 1 && t[0] == '-':
			for j := 1; j < len(t); j++ {
				opt := "-" + string(t[j])
				repl = repl || slices.Contains(spec.repl, opt)
				loop = loop || strings.IndexByte(spec.loops, t[j]) >= 0
				if slices.Contains(spec.code, opt) {
					code = true
					val := t[j+1:]
					if j+1 == len(t) && i+1 < len(args) {
						i++ // the code is the next word
						val = args[i].Text
						if !args[i].Static {
							return true
						}
					}
					repl = repl || readsTerminal(opt, val)
					if spec.codeEnds {
						i = len(args) // the rest are the program's arguments
					}
					break
				}
				if strings.IndexByte(spec.values, t[j]) >= 0 {
					if j+1 == len(t) {
						i++
					}
					break
				}
			}
		default:
			if operands == 0 && !code && slices.Contains(spec.replWords, t) {
				return true // deno repl
			}
			if !spec.script(t) {
				continue
			}
			operands++
			if spec.operands == 1 && !code && !loop {
				// The script's own arguments follow; its -i is not ours.
				i = len(args)
			}
		}
	}
	if repl && !(spec.scriptFirst && operands > 0 && !code) || loop && operands == 0 {
		return true
	}
	if code || spec.usage {
		return false
	}
	return spec.operands == 0 || operands < spec.operands
}

// script reports whether operand t counts toward spec's operands: a
// script to run, not a unit loaded before the REPL (ocaml lib.cma) nor,
// where only some endings are scripts, an address (mongosh HOST).
func (spec interpSpec) script(t string) bool {
	hasEnding := func(ends []string) bool {
		return slices.ContainsFunc(ends, func(e string) bool { return strings.HasSuffix(t, e) })
	}
	if hasEnding(spec.objects) {
		return false
	}
	return spec.scripts == nil || hasEnding(spec.scripts)
}

// ShellArgs is what a shell makes of its arguments.
type ShellArgs struct {
	// Command says -c: the first operand is the script.
	Command bool
	// Stdin says -s: the commands are read from standard input.
	Stdin bool
	// Exits says an option prints something and exits (--version).
	Exits bool
	// Unknown says an option is only known when the command runs.
	Unknown bool
	// Operands follow the options.
	Operands []Arg
}

// IsShell reports whether prog (a program's name or path) is a shell the
// classifier knows: one that runs a -c string, a script file or its
// standard input.
func IsShell(prog string) bool {
	return interpreters[path.Base(prog)].shell
}

// ReadShell reads the arguments of shell prog (a program's name or path)
// as bash does: options start with - or +, and letters may be grouped;
// with -c the script is the first operand after every option (bash -c -e
// 'x', bash -c -- 'x'); with -s, or no operand, the commands are read from
// standard input; else the first operand is a script file. ok is false
// when prog is no shell IsShell knows.
func ReadShell(prog string, args []Arg) (sh ShellArgs, ok bool) {
	spec := interpreters[path.Base(prog)]
	if !spec.shell {
		return ShellArgs{}, false
	}
	return readShell(spec, args), true
}

func readShell(spec interpSpec, args []Arg) ShellArgs {
	var sh ShellArgs
	i := 0
options:
	for ; i < len(args); i++ {
		w := args[i]
		if !w.Static {
			sh.Unknown = true
			return sh
		}
		t := w.Text
		switch {
		case t == "--" || t == "-":
			i++
			break options
		case strings.HasPrefix(t, "--"):
			name, _, hasVal := strings.Cut(t, "=")
			switch {
			case slices.Contains(spec.code, name):
				sh.Exits = true
			case name == "--command": // fish
				sh.Command = true
			case !hasVal && (name == "--rcfile" || name == "--init-file" || name == "--init-command"):
				i++
			}
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			for _, c := range t[1:] {
				switch {
				case c == 'c':
					sh.Command = true
				case c == 's':
					sh.Stdin = true
				case t[0] == '-' && slices.Contains(spec.code, "-"+string(c)):
					sh.Exits = true
				case strings.ContainsRune(spec.values, c):
					i++ // each takes the next word: -o errexit, +O extglob
				}
			}
		default:
			break options
		}
	}
	if i < len(args) {
		sh.Operands = args[i:]
	}
	return sh
}

// ShellScript returns the script shell prog (a program's name or path)
// runs with -c, as its args give it: bash -c 'python3' runs python3.
// ok is false when prog is no shell the classifier knows or runs no -c
// script.
func ShellScript(prog string, args []Arg) (script Arg, ok bool) {
	sh, ok := ReadShell(prog, args)
	if !ok || sh.Unknown || !sh.Command || len(sh.Operands) == 0 {
		return Arg{}, false
	}
	return sh.Operands[0], true
}

// terminalPrograms always want a terminal: they prompt for passwords or
// draw the screen.
var terminalPrograms = []string{
	"sudo", "su", "doas", "ssh", "mosh", "passwd", "telnet", "ftp", "sftp",
	"vim", "vi", "nvim", "nano", "pico", "emacs", "less", "more", "most",
	"top", "htop", "btop", "atop", "man", "screen", "tmux", "visudo", "vipw",
}

// batchOptions run a terminal program with no screen (emacs --batch).
var batchOptions = map[string][]string{
	"emacs": {"--batch", "-batch", "--script"},
}

// WantsTerminal reports whether prog (a program's name or path) run with
// args wants a terminal whatever its standard input: it prompts for a
// password, draws the screen, or is one of git's interactive
// subcommands (git add -p, git rebase -i).
func WantsTerminal(prog string, args []string) bool {
	prog = path.Base(prog)
	if prog == "git" {
		return gitInteractive(args)
	}
	if !slices.Contains(terminalPrograms, prog) {
		return false
	}
	return !slices.ContainsFunc(args, func(a string) bool { return slices.Contains(batchOptions[prog], a) })
}

// gitInteractive reports git args that ask hunk by hunk, or edit a todo
// list in an editor.
func gitInteractive(args []string) bool {
	sub, rest := gitSubcommand(args)
	var opts []string
	switch sub {
	case "add":
		opts = []string{"-p", "--patch", "-i", "--interactive"}
	case "checkout", "reset", "restore", "stash":
		opts = []string{"-p", "--patch"}
	case "commit":
		opts = []string{"-p", "--patch", "--interactive"} // commit -i is --include
	case "rebase", "clean":
		opts = []string{"-i", "--interactive"}
	}
	return slices.ContainsFunc(rest, func(a string) bool { return slices.Contains(opts, a) })
}

// gitGlobalValues are git's options before the subcommand that take the
// next word (git -C dir rebase -i).
var gitGlobalValues = []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", "--attr-source"}

// gitSubcommand returns git's subcommand and the words after it.
func gitSubcommand(args []string) (string, []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case slices.Contains(gitGlobalValues, a):
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a, args[i+1:]
		}
	}
	return "", nil
}

// Options says which of a program's options take a value, as the next
// word or glued (-n5, -oL, --signal=KILL).
type Options struct {
	// Short are the letters of the short options that take a value.
	Short string
	// Long are the long options that take a value as the next word
	// (without --); any long option takes one glued (--signal=KILL).
	Long []string
}

// ScanOptions reads the options at the head of args as o describes them
// and returns the index of the first operand, reporting each option
// (-n, --signal) and its value to seen, which may be nil. A "--" ends the
// options. A word only known when the command runs, where an option may
// stand, stops the scan there with ok false.
func ScanOptions(args []Arg, o Options, seen func(opt string, val Arg)) (i int, ok bool) {
	report := func(opt string, val Arg) {
		if seen != nil {
			seen(opt, val)
		}
	}
	for i = 0; i < len(args); i++ {
		w := args[i]
		if !w.Static {
			return i, false
		}
		t := w.Text
		switch {
		case t == "--":
			return i + 1, true
		case strings.HasPrefix(t, "--"):
			name, val, hasVal := strings.Cut(t[2:], "=")
			switch {
			case hasVal:
				report("--"+name, Arg{Text: val, Static: true})
			case slices.Contains(o.Long, name):
				if i+1 >= len(args) {
					return len(args), true
				}
				i++
				report("--"+name, args[i])
			default:
				report("--"+name, Arg{Static: true})
			}
		case len(t) > 1 && t[0] == '-':
			// A cluster of short options; the first that takes a value
			// takes the rest of the word, or the next word.
			for j := 1; j < len(t); j++ {
				c := t[j]
				if strings.IndexByte(o.Short, c) < 0 {
					report("-"+string(c), Arg{Static: true})
					continue
				}
				if j+1 < len(t) {
					report("-"+string(c), Arg{Text: t[j+1:], Static: true})
				} else if i+1 < len(args) {
					i++
					report("-"+string(c), args[i])
				}
				break
			}
		default:
			return i, true
		}
	}
	return len(args), true
}

// wrapperSpec says how a wrapper's arguments name the program it runs.
type wrapperSpec struct {
	Options
	// skip is how many operands come before the program: timeout's
	// duration, taskset's mask, chrt's priority.
	skip int
	// assigns says NAME=value words may come before the program (env).
	assigns bool
	// split says -S and --split-string give the program and its first
	// arguments as one word (env -S 'python3 -i').
	split bool
	// noRun are the options with which the wrapper runs no program
	// (command -v NAME, taskset -p PID).
	noRun []string
	// sub is the subcommand that runs a program (uv run, bundle exec):
	// with another, the wrapper is the program.
	sub string
}

// runsAs are the options of the wrappers that run a program as another
// user or in another namespace, of which the program is the first operand.
var runsAs = wrapperSpec{Options: Options{Long: []string{"reuid", "regid", "groups", "inh-caps", "bounding-set", "propagation", "setgroups"}}}

// placement are numactl's, prlimit's, nsenter's and cgexec's options.
var placement = wrapperSpec{Options: Options{Short: "CNmpilPtugSw", Long: []string{"cpunodebind", "membind", "physcpubind", "preferred", "interleave", "pid", "target", "mount", "setuid", "setgid", "wd"}}}

// runner is an environment manager's run subcommand's options.
func runner(sub string, skip int) wrapperSpec {
	return wrapperSpec{sub: sub, skip: skip, Options: Options{Short: "npe", Long: []string{"with", "python", "name", "prefix", "env", "environment", "directory", "project", "package", "extra", "group", "manifest-path", "cwd"}}}
}

// wrappers are the programs that only run another one, named by their
// operands: the one table the guard and the shell runner read wrappers
// from. sudo, doas and su are not among them: they want a terminal of
// their own (WantsTerminal), and the guard reads them itself.
var wrappers = map[string]wrapperSpec{
	"env":              {Options: Options{Short: "uCS", Long: []string{"unset", "chdir", "split-string"}}, assigns: true, split: true},
	"nice":             {Options: Options{Short: "n", Long: []string{"adjustment"}}},
	"nohup":            runsAs,
	"setsid":           runsAs,
	"builtin":          runsAs,
	"busybox":          runsAs,
	"unbuffer":         runsAs,
	"dbus-run-session": runsAs,
	"catchsegv":        runsAs,
	"fakeroot":         runsAs,
	"setpriv":          runsAs,
	"unshare":          runsAs,
	"proxychains":      runsAs,
	"proxychains4":     runsAs,
	"torsocks":         runsAs,
	"firejail":         runsAs,
	"stdbuf":           {Options: Options{Short: "ioe", Long: []string{"input", "output", "error"}}},
	"timeout":          {Options: Options{Short: "sk", Long: []string{"signal", "kill-after"}}, skip: 1},
	"time":             {Options: Options{Short: "fo", Long: []string{"format", "output"}}},
	"command":          {noRun: []string{"-v", "-V"}},
	"exec":             {Options: Options{Short: "a"}},
	"ionice":           {Options: Options{Short: "cnpPu", Long: []string{"class", "classdata", "pid", "pgid", "uid"}}, noRun: []string{"-p", "-P", "-u", "--pid", "--pgid", "--uid"}},
	"taskset":          {skip: 1, noRun: []string{"-p", "--pid"}},
	"chrt":             {Options: Options{Short: "TPD", Long: []string{"sched-runtime", "sched-period", "sched-deadline"}}, skip: 1, noRun: []string{"-p", "--pid", "-m", "--max"}},
	"numactl":          placement,
	"prlimit":          placement,
	"nsenter":          placement,
	"cgexec":           placement,
	"uv":               runner("run", 0),
	"poetry":           runner("run", 0),
	"pipenv":           runner("run", 0),
	"pdm":              runner("run", 0),
	"hatch":            runner("run", 0),
	"rye":              runner("run", 0),
	"conda":            runner("run", 0),
	"mamba":            runner("run", 0),
	"micromamba":       runner("run", 0),
	"pixi":             runner("run", 0),
	"bundle":           runner("exec", 0),
	"direnv":           runner("exec", 1), // direnv exec DIR PROGRAM
}

// IsWrapper reports whether prog (a program's name or path) is a wrapper
// of Unwrap's table.
func IsWrapper(prog string) bool {
	_, ok := wrappers[path.Base(prog)]
	return ok
}

// Unwrap looks through one wrapper: ok is false when args[0] (a
// program's name or path) is no wrapper of the table. Otherwise run is
// the program the wrapper runs and its arguments, a suffix of args (nil
// when it runs none: command -v python3, taskset -p PID), and split holds
// the strings env -S gives, which run the program before run's words. When
// a word only known when the command runs stands where an option, the
// subcommand or the program is expected, run starts with that word.
func Unwrap(args []Arg) (run, split []Arg, ok bool) {
	if len(args) == 0 || !args[0].Static {
		return nil, nil, false
	}
	w, ok := wrappers[path.Base(args[0].Text)]
	if !ok {
		return nil, nil, false
	}
	args = args[1:]
	if w.sub != "" {
		switch {
		case len(args) > 0 && !args[0].Static:
			return args, nil, true
		case len(args) == 0 || args[0].Text != w.sub:
			return nil, nil, false
		}
		args = args[1:]
	}
	noRun := false
	i, known := ScanOptions(args, w.Options, func(opt string, v Arg) {
		noRun = noRun || slices.Contains(w.noRun, opt)
		if w.split && (opt == "-S" || opt == "--split-string") {
			split = append(split, v)
		}
	})
	switch {
	case noRun:
		return nil, nil, true
	case !known:
		return args[i:], split, true
	}
	for w.assigns && i < len(args) && args[i].Static && IsAssignment(args[i].Text) {
		i++
	}
	return args[min(i+w.skip, len(args)):], split, true
}

// StripWrappers returns a command's words, the program first, with the
// wrappers that only run another program dropped along with their
// options and operands: env, nohup, setsid, nice, timeout, stdbuf, time,
// command, exec and the like, and the run subcommands of environment
// managers (uv run, poetry run, bundle exec). env -S's string is split
// into words. It stops at a word only known when the command runs where an
// option or the program is expected (the program is then that word), and
// returns nil when a wrapper runs no program (command -v python3,
// taskset -p PID).
func StripWrappers(args []Arg) []Arg {
	for {
		run, split, ok := Unwrap(args)
		if !ok {
			return args
		}
		var words []Arg
		for _, s := range split {
			if !s.Static {
				return append([]Arg{s}, run...)
			}
			words = append(words, StaticArgs(strings.Fields(s.Text)...)...)
		}
		args = append(words, run...)
	}
}

// IsAssignment reports whether s is a shell assignment, NAME=value, as
// env and a command line's leading words take it.
func IsAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
