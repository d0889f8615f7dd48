package guard

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/yagent/yagent/host/config"
)

// checkCommand judges a shell command: the paths it names, its programs
// against the exec rules, and what cannot be known before it runs.
func (g *WorkspaceGuard) checkCommand(v *verdict, cmd string) {
	s := analyzeCommand(cmd, g.ws, g.home)
	if s.parseErr != nil {
		v.ask(fmt.Sprintf("the command does not parse as bash (%v), so the guard cannot tell what it runs", s.parseErr), "")
	}
	for _, p := range s.paths {
		g.checkCommandPath(v, p)
	}
	// A program only known when the command runs could be one an admin
	// denied: with deny rules in force it is refused (under -y too), else
	// the user is asked.
	var denies []string
	for _, r := range g.rules {
		if r.Action == config.ExecDeny {
			denies = append(denies, ruleText(r))
		}
	}
	for _, u := range s.unknown {
		if len(denies) == 0 {
			v.ask(u, "write the program's name literally")
			continue
		}
		msg := fmt.Sprintf("%s, and the profile's exec rules deny %s; write the program's name literally", u, strings.Join(denies, ", "))
		if !slices.Contains(v.denied, msg) {
			v.denied = append(v.denied, msg)
		}
	}
	for _, c := range s.calls {
		rv := matchRules(g.rules, c)
		switch rv.action {
		case config.ExecDeny:
			msg := fmt.Sprintf("the profile's exec rule %s denies %s", ruleText(rv.rule), c.prog)
			if !slices.Contains(v.denied, msg) {
				v.denied = append(v.denied, msg)
			}
		case config.ExecAsk:
			if !s.readOnly {
				v.ask(fmt.Sprintf("the profile's exec rule %s asks before %s runs", ruleText(rv.rule), c.prog),
					fmt.Sprintf("add {action: allow, program: %s, args: [...]} to exec.rules in the profile for the calls that need no question", c.prog))
			}
		}
	}
}

// checkCommandPath judges one path a command names: "/" always asks; the
// workspace itself and the folders holding it ask; inside the workspace
// and the safe system paths do not; anything else asks. A relative name
// asks only when it leads out of the workspace (by ".." or a symlink). A
// glob is judged by the folder it matches in.
func (g *WorkspaceGuard) checkCommandPath(v *verdict, p string) {
	if i := strings.IndexAny(p, "*?["); i >= 0 {
		// A glob names what it matches: judge the folder it lists, so
		// that /tmp/* counts as holding a workspace under /tmp.
		p = filepath.Dir(p[:i] + "x")
	}
	abs := p
	relative := !filepath.IsAbs(p)
	if relative {
		abs = filepath.Join(g.ws, p)
	}
	clean := filepath.Clean(abs)
	if !relative && clean == "/" {
		v.ask("the command names / (the root folder)", "")
		v.path("/")
		return
	}
	if !relative && g.safe.device(clean) {
		return
	}
	r, err := resolvePhysical(abs)
	if err != nil {
		v.ask(fmt.Sprintf("the command names %s, which does not resolve (%v)", p, err), "")
		v.path(clean)
		return
	}
	switch {
	case r == "/":
		v.ask(fmt.Sprintf("the command names %s, the root folder", p), "")
	case within(r, g.ws, true) && (!relative || r != g.ws):
		if r == g.ws {
			v.ask(fmt.Sprintf("the command names the workspace folder itself (%s)", p), "")
		} else {
			v.ask(fmt.Sprintf("the command names %s, a folder holding the workspace", r), "")
		}
	case within(g.protected, r, true):
		v.ask(fmt.Sprintf("the command names %s, yagent's project settings", r), "")
	case within(g.ws, r, true):
		return
	case g.safe.holds(r) || g.safe.device(r):
		return
	default:
		v.ask(fmt.Sprintf("the command names %s, outside the workspace", r), "")
	}
	v.path(r)
}
