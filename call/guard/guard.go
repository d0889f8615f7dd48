package guard

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// Options configures a WorkspaceGuard.
type Options struct {
	// Workspace is the workspace root; relative paths resolve against it.
	Workspace string
	// Policy supplies read_paths, skill_dirs, network.allow, the exec
	// rules and the sandbox settings (config.Profile.Rules of the profile);
	// nil = none.
	Policy *policy.Rules
	// Home is the user's home folder, for "~"; "" = os.UserHomeDir().
	Home string
	// HashFile keeps the SHA-256 of the exec rules' programs across
	// starts, by device, inode, size, mtime and ctime (which no user can
	// set back); "" = hashed again by every process. It belongs in the
	// user's own yagent folder, beside the spec cache: nothing a sandboxed
	// command can write.
	HashFile string
	// ExecWatch says the kernel here lets a plugin judge every execve of
	// a command's tree (seccomp user notification): with the profile's
	// sandbox on, the exec rules' programs are then judged at their execve
	// with their real arguments, and an argument only known when the
	// command runs no longer makes an ask or deny rule match at parse time.
	ExecWatch bool
	// Protected are the folders and files outside the workspace the host
	// loads code or policy from: the plugin folders, the lock file, the
	// spec cache, the user's yagent folder, the managed layer. No approval
	// opens them to a call's writes, nor lets a tool write there.
	Protected []string
	// Egress starts the session's egress proxy, or finds it, for a tool
	// that runs commands under sandbox.network: proxy (Sandbox sets its
	// answer as sdk.Sandbox.Egress); nil = none: such commands get the
	// empty network namespace.
	Egress func(*session.Session) *sdk.Egress
	// PageEgress starts the session's proxy for the browser's pages, or
	// finds it, for a browser tool under sandbox.network: proxy; approved
	// are the URLs the call was approved to open after a question (its
	// origins stay open to the session's pages). nil = none: the browser
	// then reaches the network directly.
	PageEgress func(sess *session.Session, approved []string) *sdk.Egress
}

// WorkspaceGuard is the adapter.Guard: it decides from a tool's Effect and
// parameter roles, never from its name. Safe for concurrent use.
type WorkspaceGuard struct {
	ws        string // resolved workspace root
	home      string
	protected string // the workspace's .yagent folder: yagent's own settings
	readRoots []string
	safe      safeList
	network   policy.NetworkRules
	rules     []policy.ExecRule
	warnings  []string
	// sandbox is the profile whose sandbox settings Sandbox reads; nil
	// when there is no profile.
	sandbox *policy.Rules
	hashes  *policy.ProgramHashes
	progs   *progCache
	// execWatch: see Options.ExecWatch.
	execWatch bool
	// egress: see Options.Egress.
	egress func(*session.Session) *sdk.Egress
	// pageEgress: see Options.PageEgress.
	pageEgress func(sess *session.Session, approved []string) *sdk.Egress
	// own are Options.Protected outside the workspace, resolved; homes
	// the home folder as named and resolved.
	own, homes []string
}

var _ adapter.Guard = (*WorkspaceGuard)(nil)

// New returns the guard of opts.Workspace.
func New(opts Options) *WorkspaceGuard {
	home := opts.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	g := &WorkspaceGuard{ws: resolveRoot(opts.Workspace), home: home, safe: newSafeList()}
	g.protected = filepath.Join(g.ws, projectDir)
	g.readRoots, g.warnings = readRoots(g.ws, home, opts.Policy)
	if p := opts.Policy; p != nil {
		g.network = policy.NetworkRules{Allow: slices.Clone(p.Network.Allow), Deny: slices.Clone(p.Network.Deny), Unlisted: p.Network.Unlisted}
		g.rules = slices.Clone(p.Exec.Rules)
		g.sandbox = p
	}
	g.hashes, g.progs = policy.NewProgramHashes(opts.HashFile, nil), &progCache{}
	g.execWatch, g.egress, g.pageEgress = opts.ExecWatch, opts.Egress, opts.PageEgress
	g.homes = []string{filepath.Clean(home)}
	if r, err := filepath.EvalSymlinks(home); err == nil && r != g.homes[0] {
		g.homes = append(g.homes, r)
	}
	for _, p := range opts.Protected {
		if !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		r, err := resolvePhysical(p)
		if err != nil {
			r = p
		}
		for _, f := range []string{p, r} {
			if !policy.Within(g.ws, f, true) && !slices.Contains(g.own, f) {
				g.own = append(g.own, f)
			}
		}
	}
	return g
}

// Warnings name what the guard dropped at start-up: read roots the
// workspace's own content tried to add.
func (g *WorkspaceGuard) Warnings() []string { return slices.Clone(g.warnings) }

// Workspace returns the resolved workspace root the guard judges against.
func (g *WorkspaceGuard) Workspace() string { return g.ws }

// Check implements adapter.Guard: allow, ask or deny, and nothing else.
// An admin's exec deny rule refuses the call; otherwise every reason to ask
// is gathered. Passes (YOLO, session, project) are not the guard's: the
// authorization loop (host/authz) owns them and may turn an ask into allow,
// never a deny. The paths outside the workspace the call may touch travel
// in the Decision either way, so the plugin may open them.
func (g *WorkspaceGuard) Check(_ context.Context, req adapter.GuardRequest) adapter.Decision {
	spec := req.Spec
	v := verdict{effect: spec.Effect}
	if !spec.Effect.Valid() {
		v.ask(fmt.Sprintf("%s declares no known effect (%q)", spec.Name, spec.Effect), "")
	}
	if !req.Trusted && spec.Effect == sdk.EffectExec {
		v.ask(fmt.Sprintf("%s comes from an unpinned plugin, so the host cannot tell what it does", spec.Name),
			"pin the plugin's checksum in the plugin lock file (yagent plugins pin)")
	}
	if spec.AlwaysAsk {
		v.ask(fmt.Sprintf("%s asks before every call", spec.Name), "")
	}
	params := make([]string, 0, len(spec.Roles))
	for p := range spec.Roles {
		params = append(params, p)
	}
	slices.Sort(params)
	hasURL := false
	var urls []string // the URLs judged, as sent
	// sent holds each role argument as resolved here, once: the value
	// judged is the value the plugin receives.
	sent := map[string]any{}
	for _, p := range params {
		val := req.Args[p]
		switch spec.Roles[p] {
		case sdk.RolePathRead:
			sent[p] = mapStrings(val, func(s string) string { return g.checkRead(&v, req.Session, req.Temp, p, s) })
		case sdk.RolePathWrite:
			sent[p] = mapStrings(val, func(s string) string { return g.checkWrite(&v, req.Temp, p, s) })
		case sdk.RoleDangerFlag:
			if truthy(val) {
				v.ask(fmt.Sprintf("the call marks itself dangerous (%s)", p), "")
			}
		case sdk.RoleCommand:
			for _, s := range stringsOf(val) {
				g.checkCommand(&v, s, req.Trusted && g.supervised(), req.Temp)
				v.command = s // shown to the user whatever made the call ask
			}
		case sdk.RoleURL:
			hasURL = true
			sent[p] = mapStrings(val, func(s string) string { return g.judgeURL(&v, p, s) })
			urls = append(urls, stringsOf(sent[p])...)
		}
	}
	if spec.Effect == sdk.EffectNetwork && !hasURL {
		v.ask(fmt.Sprintf("%s reaches the network and names no URL the guard can check", spec.Name), "")
	}
	d := v.decision()
	d.Args = withResolved(req.Args, sent)
	d.URLs = urls
	if d.Action == adapter.Ask && takesCommand(spec) && g.sandbox != nil {
		// The question says what the answer grants.
		if g.sandbox.SandboxMode() == policy.SandboxOff {
			d.Reason += "; the sandbox is off, so approving it lets the command do whatever the user can"
		} else if t := g.grantText(d); t != "" {
			d.Reason += "; " + t
		}
	}
	return d
}

// supervised reports whether the commands of a plugin that applies the
// sandbox it is sent run under the exec supervisor: the profile's sandbox
// on and the kernel's exec listener here (Options.ExecWatch). The
// supervisor then judges every execve of a rule's program with its real
// arguments.
func (g *WorkspaceGuard) supervised() bool {
	return g.execWatch && g.sandbox != nil && g.sandbox.SandboxMode() != policy.SandboxOff
}

// verdict gathers the reasons a call asks or is refused.
type verdict struct {
	reasons, hints []string
	// paths are outside the workspace: approving the call approves them.
	paths []string
	// writes are the paths the call writes: approving it lets it write
	// them, and only read the other paths.
	writes []string
	// closed say what the call would write that no approval opens (a
	// kernel filesystem, yagent's own folders): the call is refused.
	closed []string
	// external are outside paths the read whitelist allows without asking.
	external []string
	denied   []string
	// denyHint says what would change a denial other than an exec rule's.
	denyHint string
	command  string
	// bounds say what of the call passed a bound of the guard's (a
	// command nested thousands deep): the call is refused.
	bounds []string

	// The grounds, for the audit trail (adapter.Decision.Basis, Rule).
	effect sdk.Effect
	// readRoot and sessionPaths: a read outside the workspace was let
	// through by the profile's read roots, or by paths the session
	// approved before; sessionTemp: a path was in the session's own temp
	// folder.
	readRoot, sessionPaths, sessionTemp bool
	// allowRule, askRule and denyRule are the first profile rule of each
	// action that matched, as the profile writes it.
	allowRule, askRule, denyRule string
}

// rule notes the first rule of each action that matched.
func (v *verdict) rule(slot *string, text string) {
	if *slot == "" {
		*slot = text
	}
}

// deny refuses the call by the profile's entry rule, which no approval
// opens; hint says what would change that.
func (v *verdict) deny(reason, rule, hint string) {
	v.rule(&v.denyRule, rule)
	if !slices.Contains(v.denied, reason) {
		v.denied = append(v.denied, reason)
	}
	if v.denyHint == "" {
		v.denyHint = hint
	}
}

func (v *verdict) ask(reason, hint string) {
	if !slices.Contains(v.reasons, reason) {
		v.reasons = append(v.reasons, reason)
	}
	if hint != "" && !slices.Contains(v.hints, hint) {
		v.hints = append(v.hints, hint)
	}
}

func (v *verdict) path(ps ...string) {
	for _, p := range ps {
		if p != "" && !slices.Contains(v.paths, p) {
			v.paths = append(v.paths, p)
		}
	}
}

// write notes paths the call writes.
func (v *verdict) write(ps ...string) {
	for _, p := range ps {
		if p != "" && !slices.Contains(v.writes, p) {
			v.writes = append(v.writes, p)
		}
	}
}

// refuse refuses the call: reason says what of it passed a bound of the
// guard's, which no real call comes near.
func (v *verdict) refuse(reason string) {
	if !slices.Contains(v.bounds, reason) {
		v.bounds = append(v.bounds, reason)
	}
}

func (v *verdict) decision() adapter.Decision {
	if len(v.bounds) > 0 {
		return adapter.Decision{
			Action:  adapter.Deny,
			Reason:  strings.Join(v.bounds, "; ") + ": " + boundAdvice,
			Command: v.command,
			Basis:   adapter.BasisGuard,
		}
	}
	if len(v.closed) > 0 {
		return adapter.Decision{
			Action:  adapter.Deny,
			Reason:  strings.Join(v.closed, "; "),
			Command: v.command,
			Hint:    "write inside the workspace or the temp folder",
			Basis:   adapter.BasisGuard,
		}
	}
	if len(v.denied) > 0 {
		return adapter.Decision{
			Action:  adapter.Deny,
			Reason:  strings.Join(v.denied, "; "),
			Command: v.command,
			Hint:    cmp.Or(v.denyHint, "only the profile's admin can change an exec deny rule"),
			Basis:   adapter.BasisRule,
			Rule:    v.denyRule,
		}
	}
	paths := slices.Concat(v.paths, v.external)
	paths = slices.Compact(paths)
	if len(v.reasons) == 0 {
		basis, rule := v.allowBasis()
		return adapter.Decision{Action: adapter.Allow, Paths: paths, Basis: basis, Rule: rule}
	}
	d := adapter.Decision{
		Action:  adapter.Ask,
		Reason:  strings.Join(v.reasons, "; "),
		Paths:   paths,
		Writes:  slices.Clone(v.writes),
		Command: v.command,
		Hint:    strings.Join(v.hints, ", or "),
		Basis:   adapter.BasisGuard,
	}
	if v.askRule != "" {
		d.Basis, d.Rule = adapter.BasisRule, v.askRule
	}
	return d
}

// allowBasis says on what ground a call nothing asks about is allowed: the
// widest grant it needed wins (paths the session approved, then the read
// roots, then a rule), else it touches nothing or only the workspace.
func (v *verdict) allowBasis() (basis, rule string) {
	switch {
	case v.sessionPaths:
		return adapter.BasisSessionPaths, ""
	case v.readRoot:
		return adapter.BasisReadRoot, ""
	case v.sessionTemp:
		return adapter.BasisSessionTemp, ""
	case v.allowRule != "":
		return adapter.BasisRule, v.allowRule
	case v.effect == sdk.EffectNone:
		return adapter.BasisNoEffect, ""
	}
	return adapter.BasisWorkspace, ""
}

// checkRead asks for a read outside the workspace, the session's temp
// folder and the read whitelist. Whitelisted paths outside the workspace
// go with the call, so the plugin may open them; the temp folder travels
// with every call (CallInfo.Temp). It returns the resolved path, the one
// judged and sent; p itself when it cannot be resolved (the call asks).
func (g *WorkspaceGuard) checkRead(v *verdict, sess *session.Session, temp *sdk.TempFolder, param, p string) string {
	r, abs, err := g.resolveParam(p, temp)
	if err != nil {
		v.ask(fmt.Sprintf("%s %q is not a plain path: %v", param, p, err), "")
		return p
	}
	if policy.Within(g.ws, r, true) {
		return r
	}
	if temp.Holds(r) {
		v.sessionTemp = true
		return r
	}
	if slices.ContainsFunc(g.readWhitelist(sess), func(root string) bool { return policy.Within(root, r, true) }) {
		v.external = append(v.external, abs, r)
		if slices.ContainsFunc(g.readRoots, func(root string) bool { return policy.Within(root, r, true) }) {
			v.readRoot = true
		} else {
			v.sessionPaths = true
		}
		return r
	}
	v.ask(fmt.Sprintf("%s %s is outside the workspace", param, named(p, r)), fmt.Sprintf("add %s to read_paths in the profile", filepath.Dir(r)))
	v.path(abs, r)
	return r
}

// checkWrite asks for a write outside the workspace and the session's
// temp folder, to the workspace itself, or into its .yagent folder
// (yagent's own project settings). It returns the resolved path, the one
// judged and sent.
func (g *WorkspaceGuard) checkWrite(v *verdict, temp *sdk.TempFolder, param, p string) string {
	r, abs, err := g.resolveParam(p, temp)
	if err != nil {
		v.ask(fmt.Sprintf("%s %q is not a plain path: %v", param, p, err), "")
		return p
	}
	if why := g.closedToWrites(r); why != "" {
		v.closed = append(v.closed, fmt.Sprintf("%s %s: %s", param, named(p, r), why))
		return r
	}
	switch {
	case r == g.ws:
		v.ask(fmt.Sprintf("%s names the workspace folder itself", param), "")
	case policy.Within(g.protected, r, true):
		v.ask(fmt.Sprintf("%s %s is in yagent's project settings", param, named(p, r)), "")
	case policy.Within(g.ws, r, false):
		return r
	case temp.Holds(r) && r != temp.Dir:
		v.sessionTemp = true
		return r
	default:
		v.ask(fmt.Sprintf("%s %s is outside the workspace", param, named(p, r)), "")
	}
	v.path(abs, r)
	v.write(r)
	return r
}

// resolveParam resolves a path parameter: r with every symlink followed,
// in the session's view of its temp folder, abs as named (absolute,
// cleaned), which the question shows the user beside r. The plugin is
// sent r.
func (g *WorkspaceGuard) resolveParam(p string, temp *sdk.TempFolder) (r, abs string, err error) {
	r, err = resolveArg(g.ws, g.home, p, temp)
	if err != nil {
		return "", "", err
	}
	abs = policy.ExpandHome(p, g.home)
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(g.ws, abs)
	}
	return r, filepath.Clean(abs), nil
}

// checkURL judges a URL a call reaches, the browser's navigation and a
// fetch alike: http(s) only; a host the profile grants in network.allow,
// else ask; a host of this machine or its networks (loopback, private,
// link-local, in any spelling the browser reads as one) asks unless an
// entry names it exactly, a glob never granting one.
func (g *WorkspaceGuard) checkURL(v *verdict, raw string) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		v.ask(fmt.Sprintf("the URL %q does not parse", raw), "")
		return
	}
	if scheme := strings.ToLower(u.Scheme); scheme != "http" && scheme != "https" {
		v.ask(fmt.Sprintf("the call would open a %q URL, not http(s)", scheme+":"), "")
		return
	}
	h, err := policy.ParseHost(u.Hostname())
	if err != nil {
		v.ask(fmt.Sprintf("the URL %q cannot be judged: %v", raw, err), "give the URL with a plain host name")
		return
	}
	d := g.network.Judge(h)
	switch d.Action {
	case policy.NetworkAllow:
		v.rule(&v.allowRule, d.Entry)
	case policy.NetworkDeny:
		v.deny(fmt.Sprintf("the call reaches %s%s: %s", h.Name, spelled(u, h), d.Reason), d.Entry, d.Hint)
	default:
		v.ask(fmt.Sprintf("the call reaches %s%s: %s", h.Name, spelled(u, h), d.Reason), d.Hint)
	}
}

// spelled names the URL's own spelling of a host judged under another.
func spelled(u *url.URL, h policy.Host) string {
	if given := u.Hostname(); !strings.EqualFold(given, h.Name) {
		return fmt.Sprintf(" (written %q)", given)
	}
	return ""
}

func stringsOf(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return strings.EqualFold(strings.TrimSpace(x), "true")
	}
	return false
}

// projectDir is the workspace's folder of yagent settings
// (host/config.ProjectDir), which a write into asks.
const projectDir = ".yagent"
