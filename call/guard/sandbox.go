package guard

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/internal/filestat"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

var _ adapter.SandboxPolicy = (*WorkspaceGuard)(nil)

// ReadRoots returns the roots outside the workspace that sess may read
// without asking: the main checkout of a worktree, skill_dirs, read_paths
// and the session's approved paths (resolved).
func (g *WorkspaceGuard) ReadRoots(sess *session.Session) []string {
	out := slices.Clone(g.readRoots)
	if sess != nil {
		out = append(out, sess.ApprovedPaths()...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ExecPrograms returns the programs of the profile's ask and deny exec
// rules with the files each is on this machine, hashed. A file's hash is
// kept while its device, inode, size, mtime and ctime stay the same, so a
// rule's program is hashed once, not per call; the whole list is kept
// while the folders searched and the files found are unchanged, so a call
// pays a stat per folder and per file, not one per folder and rule. A
// file that cannot be hashed is listed without its sum: it is still the
// program by its device and inode.
func (g *WorkspaceGuard) ExecPrograms() []sdk.ExecProgram {
	g.progs.mu.Lock()
	defer g.progs.mu.Unlock()
	g.refreshPrograms()
	if !g.progs.listed {
		var list []sdk.ExecProgram
		for _, r := range g.progs.found {
			p := sdk.ExecProgram{Name: r.name, Interactive: onlyInteractive(g.rules, r.name)}
			for _, f := range r.files {
				sum, _ := g.hashes.Sum(f)
				p.Files = append(p.Files, sdk.ProgramFile{Path: f.Path, Size: f.Info.Size(), SHA256: sum})
			}
			list = append(list, p)
		}
		g.progs.list, g.progs.listed = list, true
		g.hashes.Save()
	}
	return cloneProgs(g.progs.list)
}

// ruleMatcher returns the matcher of the ask and deny rules' programs by
// their files, kept while nothing they were found from changed; nil (which
// matches nothing) when no rule asks or denies.
func (g *WorkspaceGuard) ruleMatcher() *policy.ProgramMatcher {
	if !slices.ContainsFunc(g.rules, func(r policy.ExecRule) bool { return r.Action != policy.ExecAllow }) {
		return nil
	}
	g.progs.mu.Lock()
	defer g.progs.mu.Unlock()
	g.refreshPrograms()
	return g.progs.match
}

// refreshPrograms finds the rules' programs' files again unless nothing
// they were found from changed. g.progs.mu is held.
func (g *WorkspaceGuard) refreshPrograms() {
	dirs := searchDirs()
	stamps := make([]stamp, len(dirs))
	for i, d := range dirs {
		stamps[i] = stampOf(d)
	}
	if g.progs.valid(stamps) {
		return
	}
	var found []ruleProgram
	var rules []policy.RuleProgram
	var files []stamp
	seen := map[string]bool{}
	for _, r := range g.rules {
		name := path.Base(r.Program)
		if r.Action == policy.ExecAllow || seen[name] {
			continue
		}
		seen[name] = true
		rp := ruleProgram{name: name, files: programFiles(name)}
		p := policy.RuleProgram{Name: name}
		for _, f := range rp.files {
			files = append(files, stampOf(f.Path))
			p.Files = append(p.Files, policy.RuleFile{Path: f.Path, Size: f.Info.Size()})
		}
		found, rules = append(found, rp), append(rules, p)
	}
	g.progs.dirs, g.progs.files, g.progs.found, g.progs.built = stamps, files, found, true
	g.progs.match, g.progs.list, g.progs.listed = policy.NewProgramMatcher(rules, g.hashes), nil, false
	g.progs.builds++
}

// onlyInteractive reports whether every ask and deny rule on the program
// name is an ask limited to its REPL.
func onlyInteractive(rules []policy.ExecRule, name string) bool {
	for _, r := range rules {
		if path.Base(r.Program) == name && r.Action != policy.ExecAllow && !(r.Action == policy.ExecAsk && r.Interactive) {
			return false
		}
	}
	return true
}

// progCache is the rules' programs as last found, and what they were
// found from.
type progCache struct {
	mu          sync.Mutex
	built       bool
	dirs, files []stamp
	found       []ruleProgram
	match       *policy.ProgramMatcher // never changed once built
	list        []sdk.ExecProgram      // ExecPrograms' list, once listed
	listed      bool
	builds      int // for tests
}

// ruleProgram is an ask or deny rule's program and the files its name
// resolves to.
type ruleProgram struct {
	name  string
	files []policy.ExecFile
}

// valid says the folders searched are as they were (a file added, removed
// or renamed in one changes its mtime) and so is every file found.
func (c *progCache) valid(dirs []stamp) bool {
	if !c.built || !slices.Equal(c.dirs, dirs) {
		return false
	}
	for _, f := range c.files {
		if stampOf(f.path) != f {
			return false
		}
	}
	return true
}

// stamp is what a file's or folder's change shows in.
type stamp struct {
	path         string
	ok           bool
	size         int64
	mtime, ctime int64
}

func stampOf(p string) stamp {
	fi, err := os.Stat(p)
	if err != nil {
		return stamp{path: p}
	}
	return stamp{path: p, ok: true, size: fi.Size(), mtime: fi.ModTime().UnixNano(), ctime: filestat.Ctime(fi)}
}

// searchDirs are the folders programFiles searches, in its order.
func searchDirs() []string {
	var out []string
	for _, d := range slices.Concat(filepath.SplitList(hostPath()), ruleDirs) {
		if filepath.IsAbs(d) && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

func cloneProgs(ps []sdk.ExecProgram) []sdk.ExecProgram {
	out := slices.Clone(ps)
	for i := range out {
		out[i].Files = slices.Clone(out[i].Files)
	}
	return out
}

// Sandbox implements adapter.SandboxPolicy: the containment of one call's
// processes, from the profile and the session's grants now. Paths the
// guard allowed without asking may be read; of those an ask approved for
// this call (approved: by the user, a pass or -y), the ones the command
// writes are granted to writes (Sandbox.Granted) as grantWrite judges
// them, the others to reads (see grant.go). nil when the guard has no
// profile (the host sets no sandbox).
//
// The exec rules' programs go to a tool that takes a command (a
// RoleCommand parameter) alone: the exec rules judge commands, and finding
// and stamping every rule program's files on each read or edit was most of
// what such a call cost the host.
func (g *WorkspaceGuard) Sandbox(spec sdk.Spec, sess *session.Session, d adapter.Decision, approved bool) *sdk.Sandbox {
	if g.sandbox == nil {
		return nil
	}
	mode := g.sandbox.SandboxMode()
	if mode == policy.SandboxOff {
		return &sdk.Sandbox{Mode: sdk.SandboxOff}
	}
	rules := g.sandbox.Sandbox
	sb := &sdk.Sandbox{
		Mode:        mode,
		Network:     g.sandbox.SandboxNetwork(),
		Read:        slices.Concat(g.ReadRoots(sess), rules.Read),
		Write:       slices.Clone(rules.Write),
		Pids:        rules.Pids,
		MemoryMB:    rules.MemoryMB,
		TmpSizeMB:   rules.TmpSizeMB,
		UnixSockets: slices.Clone(rules.UnixSockets),
	}
	switch {
	case takesCommand(spec):
		sb.Programs = g.ExecPrograms()
		if sb.Network == sdk.NetworkProxy && g.egress != nil {
			sb.Egress = g.egress(sess)
		}
	case (spec.Effect == sdk.EffectBrowser || spec.Effect == sdk.EffectNetwork) && sb.Network == sdk.NetworkProxy && g.pageEgress != nil:
		var opened []string
		if d.Action == adapter.Ask && approved {
			opened = d.URLs
		}
		sb.Egress = g.pageEgress(sess, opened)
	}
	switch {
	case d.Action == adapter.Ask && approved:
		write, read := g.grants(d)
		sb.Granted = write
		sb.Read = append(sb.Read, read...)
	case d.Action == adapter.Allow:
		_, read := g.grants(adapter.Decision{Paths: d.Paths})
		sb.Read = append(sb.Read, read...)
	}
	sb.Read, sb.Write, sb.Granted = sortedSet(sb.Read), sortedSet(sb.Write), sortedSet(sb.Granted)
	return sb
}

func sortedSet(s []string) []string {
	var out []string
	for _, p := range s {
		if p != "" {
			out = append(out, filepath.Clean(p))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// JudgeExec applies the profile's exec rules to a program a running
// command's tree is about to exec, as Check does to a simple command whose
// words are all static: the program is known by the basenames of program,
// of argv[0] and of each interpreter, and by their files (a path, a link
// or a byte-identical copy of a rule's program is that program). terminal
// false means stdin is fed, so an interactive rule does not match. An
// empty program (one that could not be identified) gets the strictest
// rule of the profile. It returns the action (policy.ExecAllow, policy.ExecAsk or
// policy.ExecDeny) and, for ask and deny, the rule as a profile line says it.
func (g *WorkspaceGuard) JudgeExec(program string, argv, interpreters []string, terminal bool) (action, rule string) {
	return verdictText(g.judgeExec(program, argv, interpreters, terminal))
}

func verdictText(rv ruleVerdict) (action, rule string) {
	if rv.action == policy.ExecAllow {
		return policy.ExecAllow, ""
	}
	return rv.action, ruleText(rv.rule)
}

func (g *WorkspaceGuard) judgeExec(program string, argv, interpreters []string, terminal bool) ruleVerdict {
	if program == "" {
		for _, want := range []string{policy.ExecDeny, policy.ExecAsk} {
			for _, r := range g.rules {
				if r.Action == want {
					return ruleVerdict{action: want, rule: r}
				}
			}
		}
		return ruleVerdict{action: policy.ExecAllow}
	}
	c := call{prog: path.Base(program), stdinFed: !terminal}
	addName := func(p string) {
		if n := path.Base(p); p != "" && n != c.prog && !slices.Contains(c.names, n) {
			c.names = append(c.names, n)
		}
	}
	if len(argv) > 0 {
		addName(argv[0])
		for _, a := range argv[1:] {
			c.args = append(c.args, arg{text: a, static: true})
		}
	}
	for _, f := range append([]string{program}, interpreters...) {
		addName(f)
		if pf, ok := policy.StatExecFile(f); ok {
			c.files = append(c.files, pf)
		}
	}
	return matchRules(g.rules, c, g.ruleMatcher(), false)
}

// JudgeExecIn is JudgeExec for an exec made in folder dir, with the
// read-only classifier of the command check: an ask rule on a program
// that only reads (cat, ls, grep, git status in a repository whose config
// runs no program) asked nothing when the command line was judged, and
// asks nothing when a script runs it either. Only a rule that names the
// program the exec runs is softened: a copy of another program under a
// reading program's name still asks.
func (g *WorkspaceGuard) JudgeExecIn(program string, argv, interpreters []string, terminal bool, dir string) (action, rule string) {
	rv := g.judgeExec(program, argv, interpreters, terminal)
	if rv.action == policy.ExecAsk && g.readOnlyExec(program, argv, dir, rv.rule) {
		return policy.ExecAllow, ""
	}
	return verdictText(rv)
}

func (g *WorkspaceGuard) readOnlyExec(program string, argv []string, dir string, r policy.ExecRule) bool {
	name := path.Base(program)
	if program == "" || len(argv) == 0 || path.Base(r.Program) != name {
		return false
	}
	check, ok := readOnlyPrograms[name]
	if !ok || !check(argv[1:]) {
		return false
	}
	return name != "git" || filepath.IsAbs(dir) && gitRunsProgram(dir, g.home) == ""
}

// takesCommand reports whether spec has a parameter of RoleCommand.
func takesCommand(spec sdk.Spec) bool {
	for _, r := range spec.Roles {
		if r == sdk.RoleCommand {
			return true
		}
	}
	return false
}
