package guard

import (
	"strings"

	"github.com/yagent/yagent/policy"
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
var shells = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true, "yash": true,
	"fish": true, "csh": true, "tcsh": true, "xonsh": true, "elvish": true, "nu": true, "pwsh": true, "rbash": true,
}

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
		for ok && i < len(args) && args[i].static && policy.IsAssignment(args[i].text) {
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
	case "nohup", "setsid", "builtin", "busybox", "unbuffer", "dbus-run-session", "catchsegv", "fakeroot", "setpriv", "unshare", "proxychains", "proxychains4", "torsocks", "firejail":
		i, ok := skipOpts(args, optSpec{long: []string{"reuid", "regid", "groups", "inh-caps", "bounding-set", "propagation", "setgroups"}}, ignoreOpt)
		wrapped(a, args, i, ok, depth, prog)
	case "taskset":
		// taskset [-a] [-c] MASK|LIST COMMAND..., or -p [MASK] PID.
		pid := false
		i, ok := skipOpts(args, optSpec{}, func(opt string, _ arg) { pid = pid || opt == "-p" || opt == "--pid" })
		if !pid {
			wrapped(a, args, i+1, ok, depth, prog)
		}
	case "chrt":
		// chrt [policy options] PRIORITY COMMAND..., or -p [PRIO] PID.
		pid := false
		i, ok := skipOpts(args, optSpec{short: "TPD", long: []string{"sched-runtime", "sched-period", "sched-deadline"}}, func(opt string, _ arg) {
			pid = pid || opt == "-p" || opt == "--pid" || opt == "-m" || opt == "--max"
		})
		if !pid {
			wrapped(a, args, i+1, ok, depth, prog)
		}
	case "numactl", "prlimit", "nsenter", "cgexec":
		i, ok := skipOpts(args, optSpec{short: "CNmpilPtugSw", long: []string{"cpunodebind", "membind", "physcpubind", "preferred", "interleave", "pid", "target", "mount", "setuid", "setgid", "wd"}}, ignoreOpt)
		wrapped(a, args, i, ok, depth, prog)
	case "flock":
		// flock [options] FILE COMMAND..., FILE -c STRING, or FD.
		i, ok := skipOpts(args, optSpec{short: "wE", long: []string{"wait", "timeout", "conflict-exit-code"}}, ignoreOpt)
		if !ok {
			a.unknownf("the program flock runs is only known when the command runs")
			return
		}
		i++ // the lock file
		if i < len(args) && (args[i].text == "-c" || args[i].text == "--command") {
			if i+1 < len(args) {
				a.inner(args[i+1], "flock -c", depth)
			}
			return
		}
		next(i)
	case "script":
		// script runs -c STRING with the shell, or an interactive shell.
		command := false
		_, ok := skipOpts(args, optSpec{short: "cTIOBmEo", long: []string{"command", "log-timing", "log-in", "log-out", "log-io", "logging-format", "echo", "output-limit", "timing"}}, func(opt string, v arg) {
			if opt == "-c" || opt == "--command" {
				command = true
				a.inner(v, "script -c", depth)
			}
		})
		if !ok {
			a.unknownf("the program script runs is only known when the command runs")
		} else if !command {
			a.unknownf("script starts a shell that reads its commands from the terminal")
		}
	case "su", "runuser":
		command := false
		_, ok := skipOpts(permuted(args), optSpec{short: "cCsgGw", long: []string{"command", "session-command", "shell", "group", "supp-group", "whitelist-environment"}}, func(opt string, v arg) {
			if opt == "-c" || opt == "-C" || opt == "--command" || opt == "--session-command" {
				command = true
				a.inner(v, prog+" -c", depth)
			}
		})
		if !ok {
			a.unknownf("the program %s runs is only known when the command runs", prog)
		} else if !command {
			a.unknownf("%s starts a shell that reads its commands from the terminal", prog)
		}
	case "chroot":
		i, ok := skipOpts(args, optSpec{long: []string{"userspec", "groups"}}, ignoreOpt)
		if ok && i+1 >= len(args) {
			a.unknownf("chroot starts a shell that reads its commands from the terminal")
			return
		}
		wrapped(a, args, i+1, ok, depth, prog) // past NEWROOT
	case "strace", "ltrace":
		attach := false
		i, ok := skipOpts(args, optSpec{short: "oepPsuabEIOSXUn", long: []string{"output", "trace", "signal", "attach", "trace-path", "string-limit", "user", "columns", "env", "absolute-timestamps", "summary-columns", "summary-sort-by", "instruction-pointer"}}, func(opt string, _ arg) {
			attach = attach || opt == "-p" || opt == "--attach"
		})
		if !attach || i < len(args) {
			wrapped(a, args, i, ok, depth, prog)
		}
	case "valgrind", "ld.so", "ld-linux.so.2", "ld-linux-x86-64.so.2":
		i, ok := skipOpts(args, optSpec{long: []string{"library-path", "preload", "argv0", "audit", "inhibit-rpath"}}, ignoreOpt)
		wrapped(a, args, i, ok, depth, prog)
	case "parallel":
		parallelPayload(a, args, depth)
	case "tmux", "screen", "byobu", "dtach", "abduco", "expect":
		// A terminal multiplexer runs a shell, or a command through one,
		// in a terminal the guard never sees again.
		if prog == "tmux" && len(args) > 0 && tmuxQuiet[args[0].text] || prog == "screen" && len(args) == 1 && (args[0].text == "-ls" || args[0].text == "-list") {
			return
		}
		a.unknownf("%s starts a shell or a command in a terminal of its own", prog)
	case "uv", "poetry", "pipenv", "pdm", "hatch", "rye", "conda", "mamba", "micromamba", "pixi", "bundle", "direnv":
		runPayload(a, prog, args, depth)
	case "npx", "pnpx", "bunx":
		// npx -c 'STRING' runs a shell; npx PKG ARGS runs PKG's program.
		i, ok := skipOpts(args, optSpec{short: "pc", long: []string{"package", "call"}}, func(opt string, v arg) {
			if opt == "-c" || opt == "--call" {
				a.inner(v, prog+" -c", depth)
			}
		})
		wrapped(a, args, i, ok, depth, prog)
	case "hash":
		a.hash(args)
	case "enable":
		for _, w := range args {
			if !w.static || strings.HasPrefix(w.text, "-") && strings.Contains(w.text, "f") {
				a.unknownf("enable -f loads a builtin whose code the guard cannot see")
				return
			}
		}
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
			return
		}
		a.scriptFile(args[0], "source", depth, false)
	case "cd", "pushd":
		if len(args) == 0 {
			a.add(a.home) // cd alone goes home
		}
		a.cd(args)
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

// shellScript finds what a shell runs, parsing its options as bash does:
// with -c the script is the first operand after every option (bash -c -e
// 'x', bash -c -- 'x'), else the first operand is a script file (read for
// its programs), else the shell reads its standard input.
func shellScript(a *analyzer, prog string, args []arg, depth int) {
	cflag, sflag := false, false
	i := 0
options:
	for ; i < len(args); i++ {
		w := args[i]
		if !w.static {
			a.unknownf("the arguments of %s are only known when the command runs", prog)
			return
		}
		t := w.text
		switch {
		case t == "--" || t == "-":
			i++
			break options
		case strings.HasPrefix(t, "--"):
			if t == "--rcfile" || t == "--init-file" {
				i++
			}
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			for _, c := range t[1:] {
				switch c {
				case 'c':
					cflag = true
				case 's':
					sflag = true
				case 'o', 'O':
					i++ // each takes the next word: -o errexit, +O extglob
				}
			}
		default:
			break options
		}
	}
	var operands []arg
	if i < len(args) {
		operands = args[i:]
	}
	switch {
	case cflag && len(operands) > 0:
		a.inner(operands[0], prog+" -c", depth)
	case cflag:
		// bash refuses -c without a script and runs nothing.
	case sflag || len(operands) == 0:
		a.unknownf("%s reads its commands from standard input", prog)
	default:
		a.scriptFile(operands[0], prog, depth, true)
	}
}

// parallelPayload records the command GNU parallel runs: the words before
// its first ::: (run by a shell), or its input when there are none.
func parallelPayload(a *analyzer, args []arg, depth int) {
	i, ok := skipOpts(args, optSpec{short: "jSaEIdnNlLPsXCkm", long: []string{"jobs", "sshlogin", "arg-file", "delimiter", "eof", "replace", "max-args", "max-lines", "max-replace-args", "max-procs", "max-chars", "colsep", "tagstring", "basefile", "halt", "memfree", "load", "delay", "timeout", "joblog", "results", "tmpdir", "workdir", "env", "sshloginfile", "retries", "shebang-wrap", "tag", "seqreplace"}}, ignoreOpt)
	if !ok {
		a.unknownf("the program parallel runs is only known when the command runs")
		return
	}
	j := i
	for j < len(args) && !strings.HasPrefix(args[j].text, ":::") {
		j++
	}
	if j == i {
		a.unknownf("parallel runs the commands it reads from its input")
		return
	}
	if strings.Contains(args[i].text, "{") {
		a.unknownf("the program parallel runs comes from its input (%s)", args[i].text)
		return
	}
	a.inner(joinArgs(args[i:j]), "parallel", depth)
}

// tmuxQuiet are tmux subcommands that start no program.
var tmuxQuiet = map[string]bool{"ls": true, "list-sessions": true, "list-windows": true, "list-panes": true, "kill-session": true, "kill-server": true, "has-session": true, "capture-pane": true, "show-options": true, "-V": true}

// runners are the environment managers whose subcommand runs a program:
// uv run PROG, bundle exec PROG, direnv exec DIR PROG.
var runners = map[string]string{
	"uv": "run", "poetry": "run", "pipenv": "run", "pdm": "run", "hatch": "run", "rye": "run",
	"conda": "run", "mamba": "run", "micromamba": "run", "pixi": "run", "bundle": "exec", "direnv": "exec",
}

// runPayload records the program an environment manager's run runs.
func runPayload(a *analyzer, prog string, args []arg, depth int) {
	if len(args) == 0 || args[0].text != runners[prog] {
		if len(args) > 0 && !args[0].static {
			a.unknownf("the subcommand of %s is only known when the command runs", prog)
		}
		return
	}
	i, ok := skipOpts(args[1:], optSpec{short: "npe", long: []string{"with", "python", "name", "prefix", "env", "environment", "directory", "project", "package", "extra", "group", "manifest-path", "cwd"}}, ignoreOpt)
	i++
	if prog == "direnv" {
		i++ // the folder whose .envrc applies
	}
	wrapped(a, args, i, ok, depth, prog)
}

// permuted moves the operands of a GNU-permuting command after its
// options, so skipOpts sees every option (su USER -c CMD).
func permuted(args []arg) []arg {
	var opts, ops []arg
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if t == "--" {
			ops = append(ops, args[i+1:]...)
			break
		}
		if strings.HasPrefix(t, "-") && t != "-" {
			opts = append(opts, args[i])
			if (t == "-c" || t == "-C" || t == "--command" || t == "-s" || t == "--shell" || t == "-g" || t == "-G" || t == "-w") && i+1 < len(args) {
				i++
				opts = append(opts, args[i])
			}
			continue
		}
		ops = append(ops, args[i])
	}
	return append(append(opts, arg{text: "--", static: true}), ops...)
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
