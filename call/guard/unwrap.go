package guard

import (
	"strings"

	"github.com/yagent/yagent/policy"
)

// optSpec describes a program's options: which take a value.
type optSpec = policy.Options

// skipOpts reads the options at the head of args with policy.ScanOptions
// and returns the index of the first operand, reporting the value of each
// option to seen. An option whose value is not static makes the rest
// unknown (ok false).
func skipOpts(args []arg, spec optSpec, seen func(opt string, val arg)) (int, bool) {
	return policy.ScanOptions(policyArgs(args), spec, func(opt string, v policy.Arg) {
		seen(opt, arg{text: v.Text, static: v.Static})
	})
}

func ignoreOpt(string, arg) {}

// unwrap looks through prog: a wrapper's payload program is recorded as a
// call of its own, a shell's script is parsed in turn, and a program that
// cannot be known statically makes the command ask.
func unwrap(a *analyzer, prog string, args []arg, depth int) {
	next := func(i int) {
		if i < len(args) {
			a.exec(args[i:], depth+1)
		}
	}
	if policy.IsWrapper(prog) {
		// A wrapper of the classifier's table (env, nice, timeout, uv
		// run...): what it runs is a call of its own.
		run, split, ok := policy.Unwrap(policyArgs(append([]arg{{text: prog, static: true}}, args...)))
		for _, s := range split {
			a.inner(arg{text: s.Text, static: s.Static}, prog+" -S", depth)
		}
		switch {
		case !ok || len(run) == 0:
			// Another subcommand (uv pip), or no program (command -v).
		case !run[0].Static:
			a.unknownf("the program %s runs is only known when the command runs", prog)
		default:
			next(len(args) - len(run))
		}
		return
	}
	switch prog {
	case "flock":
		// flock [options] FILE COMMAND..., FILE -c STRING, or FD.
		i, ok := skipOpts(args, optSpec{Short: "wE", Long: []string{"wait", "timeout", "conflict-exit-code"}}, ignoreOpt)
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
		_, ok := skipOpts(args, optSpec{Short: "cTIOBmEo", Long: []string{"command", "log-timing", "log-in", "log-out", "log-io", "logging-format", "echo", "output-limit", "timing"}}, func(opt string, v arg) {
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
		_, ok := skipOpts(permuted(args), optSpec{Short: "cCsgGw", Long: []string{"command", "session-command", "shell", "group", "supp-group", "whitelist-environment"}}, func(opt string, v arg) {
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
		i, ok := skipOpts(args, optSpec{Long: []string{"userspec", "groups"}}, ignoreOpt)
		if ok && i+1 >= len(args) {
			a.unknownf("chroot starts a shell that reads its commands from the terminal")
			return
		}
		wrapped(a, args, i+1, ok, depth, prog) // past NEWROOT
	case "strace", "ltrace":
		attach := false
		i, ok := skipOpts(args, optSpec{Short: "oepPsuabEIOSXUn", Long: []string{"output", "trace", "signal", "attach", "trace-path", "string-limit", "user", "columns", "env", "absolute-timestamps", "summary-columns", "summary-sort-by", "instruction-pointer"}}, func(opt string, _ arg) {
			attach = attach || opt == "-p" || opt == "--attach"
		})
		if !attach || i < len(args) {
			wrapped(a, args, i, ok, depth, prog)
		}
	case "valgrind", "ld.so", "ld-linux.so.2", "ld-linux-x86-64.so.2":
		i, ok := skipOpts(args, optSpec{Long: []string{"library-path", "preload", "argv0", "audit", "inhibit-rpath"}}, ignoreOpt)
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
	case "npx", "pnpx", "bunx":
		// npx -c 'STRING' runs a shell; npx PKG ARGS runs PKG's program.
		i, ok := skipOpts(args, optSpec{Short: "pc", Long: []string{"package", "call"}}, func(opt string, v arg) {
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
	case "sudo", "doas":
		shell := false
		i, ok := skipOpts(args, optSpec{Short: "ugCDprtUT", Long: []string{"user", "group", "close-from", "chdir", "host", "prompt", "role", "type", "other-user", "command-timeout", "login-class"}}, func(opt string, _ arg) {
			shell = shell || opt == "-s" || opt == "-i" || opt == "--shell" || opt == "--login"
		})
		if shell && ok && i >= len(args) {
			a.unknownf("%s starts a shell that reads its commands from the terminal", prog)
			return
		}
		wrapped(a, args, i, ok, depth, prog)
	case "xargs":
		i, ok := skipOpts(args, optSpec{Short: "ILnPsdEa", Long: []string{"replace", "max-lines", "max-args", "max-procs", "max-chars", "delimiter", "eof", "arg-file", "process-slot-var"}}, ignoreOpt)
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
		i, ok := skipOpts(args, optSpec{Short: "nqd", Long: []string{"interval", "differences", "equexit"}}, func(opt string, _ arg) {
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
		if policy.IsShell(prog) {
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

// shellScript finds what a shell runs, its options read by
// policy.ReadShell: a -c script, a script file (read for its programs),
// or its standard input.
func shellScript(a *analyzer, prog string, args []arg, depth int) {
	sh, _ := policy.ReadShell(prog, policyArgs(args))
	operands := args[len(args)-len(sh.Operands):]
	switch {
	case sh.Unknown:
		a.unknownf("the arguments of %s are only known when the command runs", prog)
	case sh.Exits && !sh.Command:
		// --version, --help: the shell prints and runs nothing.
	case sh.Command && len(operands) > 0:
		a.inner(operands[0], prog+" -c", depth)
	case sh.Command:
		// bash refuses -c without a script and runs nothing.
	case sh.Stdin || len(operands) == 0:
		a.unknownf("%s reads its commands from standard input", prog)
	default:
		a.scriptFile(operands[0], prog, depth, true)
	}
}

// parallelPayload records the command GNU parallel runs: the words before
// its first ::: (run by a shell), or its input when there are none.
func parallelPayload(a *analyzer, args []arg, depth int) {
	i, ok := skipOpts(args, optSpec{Short: "jSaEIdnNlLPsXCkm", Long: []string{"jobs", "sshlogin", "arg-file", "delimiter", "eof", "replace", "max-args", "max-lines", "max-replace-args", "max-procs", "max-chars", "colsep", "tagstring", "basefile", "halt", "memfree", "load", "delay", "timeout", "joblog", "results", "tmpdir", "workdir", "env", "sshloginfile", "retries", "shebang-wrap", "tag", "seqreplace"}}, ignoreOpt)
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
