package guard

import (
	"strings"
)

// optSpec describes a wrapper's options: which take a value (as the next
// word, or glued: -n5, --signal=KILL).
type optSpec struct {
	short string   // letters of short options that take a value
	long  []string // long options that take a value (without --)
}

// skipOpts returns the index of the first operand of args under spec,
// reporting the value of each option to seen. A "--" ends the options. An
// option whose value is not static makes the rest unknown (ok false).
func skipOpts(args []arg, spec optSpec, seen func(opt string, val arg)) (int, bool) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.static {
			return i, false
		}
		t := w.text
		switch {
		case t == "--":
			return i + 1, true
		case strings.HasPrefix(t, "--"):
			name, val, hasVal := strings.Cut(t[2:], "=")
			if hasVal {
				seen("--"+name, arg{text: val, static: true})
				continue
			}
			if contains(spec.long, name) {
				if i+1 >= len(args) {
					return len(args), true
				}
				i++
				seen("--"+name, args[i])
				continue
			}
			seen("--"+name, arg{static: true})
		case len(t) > 1 && t[0] == '-':
			// A cluster of short options; the first that takes a value
			// takes the rest of the word, or the next word.
			for j := 1; j < len(t); j++ {
				c := t[j]
				if !strings.ContainsRune(spec.short, rune(c)) {
					seen("-"+string(c), arg{static: true})
					continue
				}
				if j+1 < len(t) {
					seen("-"+string(c), arg{text: t[j+1:], static: true})
				} else if i+1 < len(args) {
					i++
					seen("-"+string(c), args[i])
				}
				break
			}
		default:
			return i, true
		}
	}
	return len(args), true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func ignoreOpt(string, arg) {}

// shells run a script given with -c, from a file operand, or from stdin.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true, "yash": true}

// unwrap looks through prog: a wrapper's payload program is recorded as a
// call of its own, a shell's script is parsed in turn, and a program that
// cannot be known statically makes the command ask.
func unwrap(a *analyzer, prog string, args []arg, depth int) {
	next := func(i int) {
		if i < len(args) {
			a.exec(args[i:], depth+1)
		}
	}
	switch prog {
	case "env":
		i, ok := skipOpts(args, optSpec{short: "uCS", long: []string{"unset", "chdir", "split-string"}}, func(opt string, v arg) {
			if opt == "-S" || opt == "--split-string" {
				a.inner(v, "env -S", depth)
			}
		})
		for ok && i < len(args) && args[i].static && isAssignment(args[i].text) {
			i++
		}
		if !ok {
			a.unknownf("the program env runs is only known when the command runs")
			return
		}
		next(i)
	case "nice":
		i, ok := skipOpts(args, optSpec{short: "n", long: []string{"adjustment"}}, ignoreOpt)
		wrapped(a, args, i, ok, depth, "nice")
	case "nohup", "setsid", "builtin", "busybox":
		i, ok := skipOpts(args, optSpec{}, ignoreOpt)
		wrapped(a, args, i, ok, depth, prog)
	case "stdbuf":
		i, ok := skipOpts(args, optSpec{short: "ioe", long: []string{"input", "output", "error"}}, ignoreOpt)
		wrapped(a, args, i, ok, depth, prog)
	case "ionice":
		pids := false
		i, ok := skipOpts(args, optSpec{short: "cnpPu", long: []string{"class", "classdata", "pid", "pgid", "uid"}}, func(opt string, _ arg) {
			pids = pids || strings.ContainsAny(opt, "pPu") && len(opt) == 2 || opt == "--pid" || opt == "--pgid" || opt == "--uid"
		})
		if !pids {
			wrapped(a, args, i, ok, depth, prog)
		}
	case "timeout":
		i, ok := skipOpts(args, optSpec{short: "sk", long: []string{"signal", "kill-after"}}, ignoreOpt)
		wrapped(a, args, i+1, ok, depth, prog) // past the duration
	case "time":
		i, ok := skipOpts(args, optSpec{short: "fo", long: []string{"format", "output"}}, ignoreOpt)
		wrapped(a, args, i, ok, depth, prog)
	case "command":
		noExec := false
		i, ok := skipOpts(args, optSpec{}, func(opt string, _ arg) { noExec = noExec || opt == "-v" || opt == "-V" })
		if !noExec {
			wrapped(a, args, i, ok, depth, prog)
		}
	case "exec":
		i, ok := skipOpts(args, optSpec{short: "a"}, ignoreOpt)
		wrapped(a, args, i, ok, depth, prog)
	case "sudo", "doas":
		shell := false
		i, ok := skipOpts(args, optSpec{short: "ugCDprtUT", long: []string{"user", "group", "close-from", "chdir", "host", "prompt", "role", "type", "other-user", "command-timeout", "login-class"}}, func(opt string, _ arg) {
			shell = shell || opt == "-s" || opt == "-i" || opt == "--shell" || opt == "--login"
		})
		if shell && ok && i >= len(args) {
			a.unknownf("%s starts a shell that reads its commands from the terminal", prog)
			return
		}
		wrapped(a, args, i, ok, depth, prog)
	case "xargs":
		i, ok := skipOpts(args, optSpec{short: "ILnPsdEa", long: []string{"replace", "max-lines", "max-args", "max-procs", "max-chars", "delimiter", "eof", "arg-file", "process-slot-var"}}, ignoreOpt)
		if !ok {
			a.unknownf("the program xargs runs is only known when the command runs")
			return
		}
		if i >= len(args) {
			a.s.calls = append(a.s.calls, call{prog: "echo"})
			return
		}
		if replace := xargsReplace(args[:i]); replace != "" && strings.Contains(args[i].text, replace) {
			a.unknownf("the program xargs runs comes from its input (%s)", args[i].text)
			return
		}
		next(i)
	case "find":
		findPayloads(a, args, depth)
	case "watch":
		execArgv := false
		i, ok := skipOpts(args, optSpec{short: "nqd", long: []string{"interval", "differences", "equexit"}}, func(opt string, _ arg) {
			execArgv = execArgv || opt == "-x" || opt == "--exec"
		})
		if !ok {
			a.unknownf("the program watch runs is only known when the command runs")
			return
		}
		if execArgv {
			next(i)
			return
		}
		if i < len(args) {
			a.inner(joinArgs(args[i:]), "watch", depth)
		}
	case "eval":
		if len(args) > 0 {
			a.inner(joinArgs(args), "eval", depth)
		}
	case "trap":
		if len(args) > 0 && args[0].text == "--" {
			args = args[1:]
		}
		if len(args) > 0 && args[0].text != "-" && !strings.HasPrefix(args[0].text, "-") {
			a.inner(args[0], "trap", depth)
		}
	case "alias":
		for _, w := range args {
			if _, val, ok := strings.Cut(w.text, "="); ok {
				a.inner(arg{text: val, static: w.static}, "alias", depth)
			}
		}
	case "source", ".":
		if len(args) == 0 || !args[0].static {
			a.unknownf("%s reads a script whose name is only known when the command runs", prog)
		}
	case "cd", "pushd":
		if len(args) == 0 {
			a.add(a.home) // cd alone goes home
		}
	default:
		if shells[prog] {
			shellScript(a, prog, args, depth)
		}
	}
}

// xargsReplace returns the replace string of xargs -I R, -i[R] or
// --replace[=R] among its options opts: a program word holding it comes
// from xargs' input.
func xargsReplace(opts []arg) string {
	for i, w := range opts {
		t := w.text
		switch {
		case t == "-I" && i+1 < len(opts):
			return opts[i+1].text
		case strings.HasPrefix(t, "-I"):
			return t[2:]
		case t == "-i" || t == "--replace":
			return "{}"
		case strings.HasPrefix(t, "-i"):
			return t[2:]
		case strings.HasPrefix(t, "--replace="):
			return strings.TrimPrefix(t, "--replace=")
		}
	}
	return ""
}

// wrapped records the program a wrapper runs, args[i:].
func wrapped(a *analyzer, args []arg, i int, ok bool, depth int, wrapper string) {
	if !ok {
		a.unknownf("the program %s runs is only known when the command runs", wrapper)
		return
	}
	if i < len(args) {
		a.exec(args[i:], depth+1)
	}
}

// shellScript finds what a shell runs: the -c string (parsed in turn), a
// script file (its name is judged as a path; its contents are not read),
// or its standard input, which the guard cannot know.
func shellScript(a *analyzer, prog string, args []arg, depth int) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.static {
			a.unknownf("the arguments of %s are only known when the command runs", prog)
			return
		}
		t := w.text
		switch {
		case t == "--" || t == "-":
			if i+1 < len(args) {
				return // a script file
			}
			a.unknownf("%s reads its commands from standard input", prog)
			return
		case strings.HasPrefix(t, "--"):
			if t == "--rcfile" || t == "--init-file" {
				i++
			}
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			if strings.ContainsRune(t[1:], 'c') && t[0] == '-' {
				if i+1 >= len(args) {
					a.unknownf("%s -c has no script", prog)
					return
				}
				a.inner(args[i+1], prog+" -c", depth)
				return
			}
			if strings.ContainsRune(t[1:], 's') {
				a.unknownf("%s -s reads its commands from standard input", prog)
				return
			}
			if strings.ContainsAny(t[1:], "oO") && i+1 < len(args) {
				i++ // -o option
			}
		default:
			return // a script file, judged as a path
		}
	}
	a.unknownf("%s reads its commands from standard input", prog)
}

// findPayloads records the programs of find's -exec, -execdir, -ok and
// -okdir, each up to its ";" or "+".
func findPayloads(a *analyzer, args []arg, depth int) {
	for i := 0; i < len(args); i++ {
		switch args[i].text {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		j := i + 1
		for j < len(args) && args[j].text != ";" && args[j].text != "+" {
			j++
		}
		payload := args[i+1 : j]
		i = j
		if len(payload) == 0 {
			continue
		}
		if strings.Contains(payload[0].text, "{}") {
			a.unknownf("find runs the files it finds (%s)", payload[0].text)
			continue
		}
		a.exec(payload, depth+1)
	}
}

// joinArgs joins words with spaces, as eval and watch do.
func joinArgs(args []arg) arg {
	out := arg{static: true}
	parts := make([]string, len(args))
	for i, w := range args {
		parts[i] = w.text
		out.static = out.static && w.static
	}
	out.text = strings.Join(parts, " ")
	return out
}

// isAssignment reports NAME=value.
func isAssignment(s string) bool {
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
