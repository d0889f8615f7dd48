package guard

import (
	"strings"
)

// interpSpec says how an interpreter's arguments tell a script run from
// an interactive session (a REPL reads what the model types next, which no
// rule sees).
type interpSpec struct {
	// values are the short options that take a value (-W arg, -Iinc).
	values string
	// longValues are the long options that take a value as the next word.
	longValues []string
	// code are the options whose value is the program (-c, -e): the
	// interpreter runs it and exits.
	code []string
	// repl are the options that start the REPL whatever else is given.
	repl []string
	// operands is how many operands make a run non-interactive: 1 for a
	// script file; 2 for sqlite3 DB SQL; 0 when operands never do (psql
	// DBNAME, gdb PROG).
	operands int
	// oneDash says the long options take one dash (-batch, -cmd).
	oneDash bool
	// always says the program is a REPL whatever its arguments.
	always bool
	// loops are the short options that run the code once per input line
	// (perl -n, -p): with no file operand the input is the terminal.
	loops string
}

// interpreters are the programs the built-in ask rules name with
// interactive: true, and any an admin adds (unknown ones: no operand is
// interactive).
var interpreters = map[string]interpSpec{
	"python":  pythonSpec,
	"python2": pythonSpec,
	"python3": pythonSpec,
	"pypy":    pythonSpec,
	"pypy3":   pythonSpec,
	"ipython": {code: []string{"-c", "-m"}, repl: []string{"-i"}, operands: 1},
	"node":    nodeSpec,
	"nodejs":  nodeSpec,
	"deno":    {operands: 1}, // deno alone or deno repl; deno run x.ts has operands
	"bun":     {operands: 1},
	"perl":    {values: "IMmlx0", code: []string{"-e", "-E", "-v", "-c"}, repl: []string{"-d"}, operands: 1, loops: "np"},
	"ruby":    {values: "IrCEFKTUWx", code: []string{"-e", "-v", "-h"}, operands: 1, loops: "np"},
	"irb":     {always: true},
	"pry":     {always: true},
	"php":     {values: "cdnzf", code: []string{"-r", "-B", "-R", "-F", "-E", "-v", "-h", "-i", "-m", "-l"}, repl: []string{"-a"}, operands: 1},
	"lua":     luaSpec,
	"luajit":  luaSpec,
	"lua5.4":  luaSpec,
	"R":       {code: []string{"-e", "-f", "--file"}, longValues: []string{"file"}, operands: 0},
	"julia":   {values: "LtpJC", code: []string{"-e", "-E"}, repl: []string{"-i"}, operands: 1},
	"ghci":    {always: true},
	"sqlite3": {oneDash: true, longValues: []string{"cmd", "separator", "nullvalue", "newline", "init", "mmap", "vfs", "lookaside", "pagecache", "heap", "maxsize", "zip", "deserialize"}, repl: []string{"-interactive"}, operands: 2},
	"psql":    {values: "dhpUvPTFRLoWS", longValues: []string{"dbname", "host", "port", "username", "set", "variable", "pset", "output", "log-file"}, code: []string{"-c", "-f", "--command", "--file", "-l", "--list"}, operands: 0},
	"mysql":   {values: "hPuDSe", longValues: []string{"host", "port", "user", "database", "socket"}, code: []string{"-e", "--execute"}, operands: 0},
	"mariadb": {values: "hPuDSe", longValues: []string{"host", "port", "user", "database", "socket"}, code: []string{"-e", "--execute"}, operands: 0},
	"gdb":     {oneDash: true, longValues: []string{"ex", "x", "p", "ix", "iex", "cd", "d", "directory", "pid", "core", "c", "s", "symbols", "se", "e", "exec"}, code: []string{"-batch", "--batch", "-version", "--version"}, operands: 0},
	"lldb":    {code: []string{"-b", "--batch"}, values: "osOSpnkKaA", operands: 0},
	"tclsh":   {operands: 1},
	"guile":   {code: []string{"-c", "-s"}, values: "Lxl", operands: 1},
	"jshell":  {always: true},
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
		return contains(replModules, code)
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
	pythonSpec = interpSpec{values: "WXQ", code: []string{"-c", "-m", "-h"}, repl: []string{"-i"}, operands: 1}
	nodeSpec   = interpSpec{values: "rC", longValues: []string{"require", "import", "loader", "conditions", "env-file", "inspect-port", "title", "input-type"},
		code: []string{"-e", "--eval", "-p", "--print", "--test", "--check", "-c", "-v", "--version"}, repl: []string{"-i", "--interactive"}, operands: 1}
	luaSpec = interpSpec{values: "l", code: []string{"-e", "-v"}, repl: []string{"-i"}, operands: 1}
)

// interactive reports whether prog run with args starts its REPL (or reads
// its program from standard input, the terminal in a pty). An argument only
// known when the command runs could be anything, so it counts.
func interactive(prog string, args []arg) bool {
	spec, ok := interpreters[prog]
	if !ok {
		spec = interpSpec{operands: 1}
	}
	if spec.always {
		return true
	}
	code, repl, loop, operands := false, false, false, 0
	if len(args) > 0 && args[0].static && contains(exitOptions, args[0].text) {
		return false // --version, --help: prints and exits
	}
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.static {
			return true
		}
		t := w.text
		switch {
		case t == "-":
			return true // the program is read from standard input
		case t == "--":
			operands += len(args) - i - 1
			i = len(args)
		case strings.HasPrefix(t, "--") || spec.oneDash && len(t) > 1 && t[0] == '-':
			name, _, hasVal := strings.Cut(strings.TrimLeft(t, "-"), "=")
			full := t
			if hasVal {
				full, _, _ = strings.Cut(t, "=")
			}
			if contains(spec.code, full) {
				code = true
				_, val, _ := strings.Cut(t, "=")
				if !hasVal && i+1 < len(args) && contains(longCodeValues, full) {
					val = args[i+1].text
				}
				repl = repl || readsTerminal(full, val)
			}
			repl = repl || contains(spec.repl, full)
			if !hasVal && contains(spec.longValues, name) {
				i++
			}
		case len(t) > 1 && t[0] == '-':
			for j := 1; j < len(t); j++ {
				opt := "-" + string(t[j])
				repl = repl || contains(spec.repl, opt)
				loop = loop || strings.IndexByte(spec.loops, t[j]) >= 0
				if contains(spec.code, opt) {
					code = true
					val := t[j+1:]
					if j+1 == len(t) && i+1 < len(args) {
						i++ // the code is the next word
						val = args[i].text
						if !args[i].static {
							return true
						}
					}
					repl = repl || readsTerminal(opt, val)
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
			operands++
			if spec.operands == 1 && !code && !loop {
				// The script's own arguments follow; its -i is not ours.
				i = len(args)
			}
		}
	}
	if repl || loop && operands == 0 {
		return true
	}
	if code {
		return false
	}
	return spec.operands == 0 || operands < spec.operands
}
