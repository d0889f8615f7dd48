package guard

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// checkCommand judges a shell command: the paths it names, its programs
// against the exec rules, and what cannot be known before it runs. With
// supervised, the exec supervisor judges each execve of a rule's program
// with its real arguments, so an argument only known when the command
// runs is left to it. temp is the session's own temp folder: the
// command's /tmp (and TMPDIR) when it stands for it.
func (g *WorkspaceGuard) checkCommand(v *verdict, cmd string, supervised bool, temp *sdk.TempFolder) {
	s := analyzeCommand(cmd, g.ws, g.home, temp)
	if s.bound != "" {
		v.refuse(s.bound)
		return
	}
	parseMsg := ""
	if s.parseErr != nil {
		// bash runs the lines before a syntax error: a command that does
		// not parse could run any program, so it is judged like one only
		// known when it runs.
		parseMsg = fmt.Sprintf("the command does not parse as bash (%v), so the guard cannot tell what it runs", s.parseErr)
		s.unknown = append(s.unknown, parseMsg)
	}
	globs := newGlobBudget()
	for _, p := range s.paths {
		// What the command does with a path, as far as the guard can
		// tell, is what approving it grants: a reading command reads, and
		// a word only known in part names a folder it may read.
		g.checkCommandPath(v, p, globs, !s.readOnly && s.writes[p], temp)
	}
	if globs.exhausted() {
		v.ask(globsUnjudged, "name the files without a glob")
	}
	for _, u := range s.pathUnknown {
		v.ask(u, "write the folder's name literally")
	}
	// A program only known when the command runs could be one an admin
	// denied: with deny rules in force it is refused (under -y too), else
	// the user is asked.
	var denies []string
	for _, r := range g.rules {
		if r.Action == policy.ExecDeny {
			denies = append(denies, ruleText(r))
		}
	}
	if len(denies) > 0 {
		s.unknown = append(s.unknown, s.strict...)
	}
	for _, u := range s.unknown {
		hint := "write the program's name literally"
		if u == parseMsg {
			hint = "fix the command's bash syntax"
		}
		if len(denies) == 0 {
			v.ask(u, hint)
			continue
		}
		msg := fmt.Sprintf("%s, and the profile's exec rules deny %s; %s", u, strings.Join(denies, ", "), hint)
		v.rule(&v.denyRule, strings.Join(denies, ", "))
		if !slices.Contains(v.denied, msg) {
			v.denied = append(v.denied, msg)
		}
	}
	files := g.ruleMatcher()
	// A copy, link or move of a rule's program runs it under another
	// name, with arguments the guard will not see.
	for _, src := range s.copied {
		f, ok := policy.StatExecFile(src)
		if !ok {
			continue
		}
		is := files.Match(nil, []policy.ExecFile{f})
		for _, r := range g.rules {
			if r.Action != policy.ExecAllow && slices.Contains(is, path.Base(r.Program)) {
				s.calls = append(s.calls, call{prog: path.Base(r.Program), args: []arg{{text: unknownMark}}, copied: src})
			}
		}
	}
	for _, c := range s.calls {
		// A builtin runs without an execve, and a copy of a rule's
		// program with arguments the guard never sees: neither is left
		// to the supervisor.
		later := supervised && c.copied == "" && !isBuiltin(c)
		rv := matchRules(g.rules, c, files, later)
		switch rv.action {
		case policy.ExecDeny:
			v.rule(&v.denyRule, ruleText(rv.rule))
			msg := fmt.Sprintf("the profile's exec rule %s denies %s%s", ruleText(rv.rule), progText(c, rv.rule), matchNote(rv.rule, c, later))
			if !slices.Contains(v.denied, msg) {
				v.denied = append(v.denied, msg)
			}
		case policy.ExecAsk:
			if !s.readOnly {
				v.rule(&v.askRule, ruleText(rv.rule))
				v.ask(fmt.Sprintf("the profile's exec rule %s asks before %s runs%s", ruleText(rv.rule), progText(c, rv.rule), matchNote(rv.rule, c, later)),
					fmt.Sprintf("add {action: allow, program: %s, args: [...]} to exec.rules in the profile for the calls that need no question", c.prog))
			}
		case policy.ExecAllow:
			if rv.rule.Program != "" {
				v.rule(&v.allowRule, ruleText(rv.rule))
			}
		}
	}
}

// checkCommandPath judges one path a command names: "/" always asks; the
// workspace itself and the folders holding it ask; inside the workspace,
// the session's temp folder and the safe system paths do not; anything
// else asks. A relative name asks only when it leads out of the workspace
// (by ".." or a symlink). A glob is judged by the folder it matches in.
// Paths are resolved as the command will see them: under a temp folder
// the session's own stands for, in that one.
func (g *WorkspaceGuard) checkCommandPath(v *verdict, p string, globs *globBudget, write bool, temp *sdk.TempFolder) {
	if i := strings.IndexAny(p, "*?["); i >= 0 {
		// A glob names what it matches: every match as the kernel
		// resolves it, and the folder it lists, so that /tmp/* counts as
		// holding a workspace under /tmp.
		g.checkGlob(v, p, globs, write, temp)
		p = filepath.Dir(p[:i] + "x")
	}
	note := func(r string) {
		v.path(r)
		if write {
			v.write(r)
		}
	}
	abs := p
	relative := !filepath.IsAbs(p)
	if relative {
		abs = joinRaw(g.ws, p) // not cleaned: "e/.." is judged after e's symlink
	}
	clean := filepath.Clean(abs)
	if !relative && clean == "/" {
		v.ask("the command names / (the root folder)", "")
		note("/")
		return
	}
	if !relative && g.safe.device(clean) {
		return
	}
	r, err := resolveIn(abs, temp)
	if err != nil {
		v.ask(fmt.Sprintf("the command names %s, which does not resolve (%v)", p, err), "")
		note(clean)
		return
	}
	switch {
	case r == "/":
		v.ask(fmt.Sprintf("the command names %s, the root folder", p), "")
	case policy.Within(r, g.ws, true) && (!relative || r != g.ws):
		if r == g.ws {
			v.ask(fmt.Sprintf("the command names the workspace folder itself (%s)", p), "")
		} else {
			v.ask(fmt.Sprintf("the command names %s, a folder holding the workspace", r), "")
		}
	case policy.Within(g.protected, r, true):
		v.ask(fmt.Sprintf("the command names %s, yagent's project settings", r), "")
	case policy.Within(g.ws, r, true):
		return
	case temp.Holds(r):
		return
	case g.safe.holds(r) || g.safe.device(r):
		return
	default:
		v.ask(fmt.Sprintf("the command names %s, outside the workspace", r), "")
	}
	note(r)
}

// checkGlob judges every match of the glob p against the filesystem now,
// as the command will see it.
func (g *WorkspaceGuard) checkGlob(v *verdict, p string, globs *globBudget, write bool, temp *sdk.TempFolder) {
	pattern := p
	if !filepath.IsAbs(p) {
		pattern = joinRaw(g.ws, p)
	}
	for _, m := range expandGlobIn(pattern, globs, temp) {
		if !strings.ContainsAny(m, "*?[") {
			g.checkCommandPath(v, m, globs, write, temp)
		}
	}
}

// progText names the program of c in a message: a copy, or another name
// for the rule's program, says so.
func progText(c call, r policy.ExecRule) string {
	switch name := path.Base(r.Program); {
	case c.copied != "":
		return fmt.Sprintf("%s (the command copies or links %s, which would run it under another name)", name, c.copied)
	case c.prog != name && !slices.Contains(c.names, name):
		return fmt.Sprintf("%s (the same file as %s)", c.prog, name)
	}
	return c.prog
}

// bashBuiltins are the names bash runs itself, without an execve, when a
// command calls them by name.
var bashBuiltins = strings.Fields(". : [ alias bg bind break builtin caller cd command compgen complete compopt continue " +
	"declare dirs disown echo enable eval exec exit export false fc fg getopts hash help history jobs kill let local logout " +
	"mapfile popd printf pushd pwd read readarray readonly return set shift shopt source suspend test times trap true type " +
	"typeset ulimit umask unalias unset wait")

// isBuiltin reports whether c may run as a bash builtin.
func isBuiltin(c call) bool {
	return slices.Contains(bashBuiltins, c.prog) || slices.ContainsFunc(c.names, func(n string) bool { return slices.Contains(bashBuiltins, n) })
}

// matchNote says what made r match c beyond the words it names, for the
// model to write the command so it can be judged: an option the program
// reads as none of its own or as several, or an argument only known when
// the command runs. "" when c's words hold what r names.
func matchNote(r policy.ExecRule, c call, later bool) string {
	if matchArgs(r, c, true, true) {
		return ""
	}
	got := parseArgv(c.prog, r.Program, c.args)
	switch {
	case len(got.odd) > 0:
		return fmt.Sprintf(" (%s does not read %s as exactly one of its options, so it may be what the rule names: write each option in full)",
			c.prog, strings.Join(got.odd, ", "))
	case got.vague && !later:
		return " (an argument only known when the command runs may be what the rule names: write it literally)"
	}
	return ""
}
