package guard

import (
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// readOnlyFile is the read-only classifier: f only reads when it is plain
// simple commands joined by && || ; and |, each a program of the table
// below with arguments it checks, every word known before the command runs,
// and no redirection but input, a copy of a descriptor or /dev/null. It is
// conservative: anything else is not read-only. It may turn an exec rule's
// ask into allow; it never overrides a path ask or danger_flag.
func readOnlyFile(f *syntax.File, a *analyzer) bool {
	if len(f.Stmts) == 0 {
		return false
	}
	for _, st := range f.Stmts {
		if !readOnlyStmt(st, a) {
			return false
		}
	}
	return true
}

func readOnlyStmt(st *syntax.Stmt, a *analyzer) bool {
	if st.Background || st.Coprocess || st.Disown {
		return false
	}
	for _, r := range st.Redirs {
		if !readOnlyRedirect(r, a) {
			return false
		}
	}
	switch c := st.Cmd.(type) {
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt, syntax.OrStmt, syntax.Pipe:
			return readOnlyStmt(c.X, a) && readOnlyStmt(c.Y, a)
		}
		return false
	case *syntax.CallExpr:
		return readOnlyCall(c, a)
	}
	return false
}

func readOnlyRedirect(r *syntax.Redirect, a *analyzer) bool {
	switch r.Op {
	case syntax.RdrIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return (r.Word == nil || static(r.Word, a)) && (r.Hdoc == nil || static(r.Hdoc, a))
	case syntax.DplIn, syntax.DplOut:
		w := a.render(r.Word)
		return w.static && (isDigits(w.text) || w.text == "-")
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob:
		w := a.render(r.Word)
		return w.static && w.text == "/dev/null"
	}
	return false
}

// static reports a word with no expansion the guard cannot do: for a
// here-document, no command substitution runs.
func static(w *syntax.Word, a *analyzer) bool {
	ok := true
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp:
			ok = false
		}
		return ok
	})
	return ok
}

func readOnlyCall(c *syntax.CallExpr, a *analyzer) bool {
	for _, as := range c.Assigns {
		if as.Append || as.Array != nil || as.Index != nil || (as.Value != nil && !a.render(as.Value).static) {
			return false
		}
		if as.Name != nil && runsFromEnv(as.Name.Value) {
			return false
		}
	}
	if len(c.Args) == 0 {
		return len(c.Assigns) > 0
	}
	argv := make([]string, 0, len(c.Args))
	for _, w := range c.Args {
		r := a.render(w)
		if !r.static || (len(argv) == 0 && r.glob) {
			return false
		}
		argv = append(argv, r.text)
	}
	check, ok := readOnlyPrograms[argv[0]]
	if !ok || !check(argv[1:]) {
		return false
	}
	return argv[0] != "git" || a.gitSafe()
}

// runsFromEnv reports a variable that makes git (or its pager) run a
// program or read another config: GIT_PAGER, GIT_EXTERNAL_DIFF,
// GIT_CONFIG_*, GIT_DIR, PAGER, LESSOPEN, ...
func runsFromEnv(name string) bool {
	switch name {
	case "PAGER", "LESSOPEN", "LESSCLOSE", "EDITOR", "VISUAL", "LESS", "HOME", "XDG_CONFIG_HOME":
		return true
	}
	return strings.HasPrefix(name, "GIT_")
}

// gitSafe reports whether git, run in any folder the command may be in,
// finds a repository whose config makes it run no program.
func (a *analyzer) gitSafe() bool {
	if a.cwdUnknown {
		return false
	}
	for _, d := range a.cwds {
		if why := gitRunsProgram(d, a.home); why != "" {
			return false
		}
	}
	return true
}

// readOnlyPrograms maps a program, named as plain as the shell finds it
// on PATH, to the check of its arguments.
var readOnlyPrograms = map[string]func(args []string) bool{}

func init() {
	plainReads := []string{
		"grep", //yagent:not-a-tool-name the grep program, not the tool
		"cat", "head", "tail", "wc", "ls", "pwd", "echo", "printf", "egrep", "fgrep",
		"which", "type", "stat", "du", "df", "diff", "cmp", "basename", "dirname", "realpath",
		"readlink", "whoami", "id", "uname", "true", "false", "test", "[", "cut", "tr", "nl",
		"od", "hexdump", "md5sum", "sha1sum", "sha256sum", "sha512sum", "column", "comm",
		"join", "paste", "fold", "rev", "tac", "strings", "seq", "jq", "cd", "file",
	}
	for _, p := range plainReads {
		readOnlyPrograms[p] = noneOf()
	}
	readOnlyPrograms["file"] = noneOf("-C", "--compile")
	readOnlyPrograms["date"] = noneOf("-s", "--set")
	readOnlyPrograms["rg"] = noneOf("--pre")
	readOnlyPrograms["tree"] = noneOf("-o")
	readOnlyPrograms["uniq"] = atMostOperands(1)
	readOnlyPrograms["xxd"] = func(args []string) bool { return noneOf("-r", "-revert")(args) && atMostOperands(1)(args) }
	readOnlyPrograms["sort"] = noneOf("-o", "--output", "--compress-program")
	readOnlyPrograms["find"] = noneOf("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls")
	readOnlyPrograms["sed"] = sedReadOnly
	readOnlyPrograms["git"] = gitReadOnly
}

// noneOf allows any arguments but the options named (also as -o... or
// --opt=...).
func noneOf(opts ...string) func([]string) bool {
	return func(args []string) bool {
		for _, a := range args {
			for _, o := range opts {
				if a == o || strings.HasPrefix(a, o+"=") || (len(o) == 2 && o[0] == '-' && o[1] != '-' && strings.HasPrefix(a, o)) {
					return false
				}
			}
		}
		return true
	}
}

// atMostOperands allows at most n operands (uniq IN OUT writes OUT).
func atMostOperands(n int) func([]string) bool {
	return func(args []string) bool {
		count := 0
		for _, a := range args {
			if !strings.HasPrefix(a, "-") || a == "-" {
				count++
			}
		}
		return count <= n
	}
}

// sedPrintOnly matches scripts of print commands: 5p, 1,20p, $p,
// /re/p, /a/,/b/p, joined by ";".
var sedPrintOnly = regexp.MustCompile(`^\s*(((\d+|\$|/[^/]*/)(\s*,\s*(\d+|\$|/[^/]*/))?)?\s*p\s*;?\s*)+$`)

// sedReadOnly allows sed -n with print-only scripts and no in-place edit.
func sedReadOnly(args []string) bool {
	quiet, script := false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-n" || a == "--quiet" || a == "--silent":
			quiet = true
		case a == "-e" || a == "--expression":
			if i+1 >= len(args) || !sedPrintOnly.MatchString(args[i+1]) {
				return false
			}
			script = true
			i++
		case strings.HasPrefix(a, "-"):
			return false // -i, -f, -s, -E, ...: not known to be read-only
		case !script:
			if !sedPrintOnly.MatchString(a) {
				return false
			}
			script = true
		}
	}
	return quiet && script
}

// gitReadOnly allows status, log, diff, show and a few more inspecting
// subcommands, with no global option before the subcommand and no option
// that writes a file or runs a program.
func gitReadOnly(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "status", "log", "diff", "show", "blame", "rev-parse", "ls-files", "describe", "shortlog":
	default:
		return false
	}
	return noneOf("--output", "-c", "--ext-diff", "--textconv", "-O", "--open-files-in-pager", "--exec")(args[1:])
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
