package guard

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/yagent/yagent/host/adapter"
	"github.com/yagent/yagent/host/config"
	"github.com/yagent/yagent/sdk"
)

// Options configures a WorkspaceGuard.
type Options struct {
	// Workspace is the workspace root; relative paths resolve against it.
	Workspace string
	// Profile supplies read_paths, skill_dirs and network.allow; nil = none.
	Profile *config.Profile
	// Yolo (-y) allows every call.
	Yolo bool
}

// WorkspaceGuard is the interim adapter.Guard. Safe for concurrent use.
type WorkspaceGuard struct {
	ws       string
	yolo     bool
	readable []string // resolved read whitelist beyond the workspace
	safe     []string // resolved safe system paths
	netAllow []string
}

var _ adapter.Guard = (*WorkspaceGuard)(nil)

// safeSystemPaths are the absolute paths a command may name without asking:
// the one list, in one place. $TMPDIR joins them at New.
func safeSystemPaths() []string {
	return []string{
		"/dev/null", "/dev/zero", "/dev/urandom", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty",
		"/usr", "/bin", "/sbin", "/lib", "/lib64", "/opt", "/tmp",
	}
}

// New returns the guard of opts.Workspace.
func New(opts Options) *WorkspaceGuard {
	g := &WorkspaceGuard{ws: resolveRoot(opts.Workspace), yolo: opts.Yolo}
	if p := opts.Profile; p != nil {
		for _, d := range slices.Concat(p.ReadPaths, p.SkillDirs) {
			if r, err := resolve(g.ws, d); err == nil {
				g.readable = append(g.readable, r)
			}
		}
		g.netAllow = slices.Clone(p.Network.Allow)
	}
	safe := safeSystemPaths()
	if tmp := os.Getenv("TMPDIR"); filepath.IsAbs(tmp) {
		safe = append(safe, filepath.Clean(tmp))
	}
	for _, s := range safe {
		g.safe = append(g.safe, s)
		if r, err := resolve("/", s); err == nil && r != s {
			g.safe = append(g.safe, r)
		}
	}
	return g
}

// Check implements adapter.Guard.
func (g *WorkspaceGuard) Check(_ context.Context, req adapter.GuardRequest) adapter.Decision {
	if g.yolo {
		return adapter.Decision{Action: adapter.Allow}
	}
	spec := req.Spec
	var v verdict
	if !spec.Effect.Valid() {
		v.ask(fmt.Sprintf("%s declares no known effect (%q)", spec.Name, spec.Effect), "")
	}
	if !req.Trusted && spec.Effect == sdk.EffectExec {
		v.ask(fmt.Sprintf("%s comes from an unpinned plugin, so the host cannot tell what it does", spec.Name),
			"pin the plugin's checksum in the plugin lock file and grant the tool in the profile")
	}
	if spec.AlwaysAsk {
		v.ask(fmt.Sprintf("%s always asks", spec.Name), "")
	}
	params := make([]string, 0, len(spec.Roles))
	for p := range spec.Roles {
		params = append(params, p)
	}
	slices.Sort(params)
	hasURL := false
	for _, p := range params {
		vals := stringsOf(req.Args[p])
		switch spec.Roles[p] {
		case sdk.RolePathRead:
			for _, s := range vals {
				g.checkPath(&v, p, s, false)
			}
		case sdk.RolePathWrite:
			for _, s := range vals {
				g.checkPath(&v, p, s, true)
			}
		case sdk.RoleDangerFlag:
			if truthy(req.Args[p]) {
				v.ask(fmt.Sprintf("the call marks itself dangerous (%s)", p), "")
			}
		case sdk.RoleCommand:
			for _, s := range vals {
				g.checkCommand(&v, s)
				v.command = s // shown to the user whatever made the call ask
			}
		case sdk.RoleURL:
			hasURL = true
			for _, s := range vals {
				g.checkURL(&v, spec.Effect, s)
			}
		}
	}
	if spec.Effect == sdk.EffectNetwork && !hasURL {
		v.ask(fmt.Sprintf("%s reaches the network and names no URL the guard can check", spec.Name), "")
	}
	return v.decision()
}

// verdict gathers the reasons a call asks.
type verdict struct {
	reasons, hints, paths []string
	command               string
}

func (v *verdict) ask(reason, hint string) {
	v.reasons = append(v.reasons, reason)
	if hint != "" && !slices.Contains(v.hints, hint) {
		v.hints = append(v.hints, hint)
	}
}

func (v *verdict) decision() adapter.Decision {
	if len(v.reasons) == 0 {
		return adapter.Decision{Action: adapter.Allow}
	}
	return adapter.Decision{
		Action:  adapter.Ask,
		Reason:  strings.Join(v.reasons, "; "),
		Paths:   slices.Compact(v.paths),
		Command: v.command,
		Hint:    strings.Join(v.hints, ", or "),
	}
}

func (g *WorkspaceGuard) checkPath(v *verdict, param, p string, write bool) {
	r, err := resolve(g.ws, p)
	if err != nil {
		v.ask(fmt.Sprintf("%s %q is not a plain path: %v", param, p, err), "")
		return
	}
	if write {
		if !within(g.ws, r, false) {
			v.ask(fmt.Sprintf("%s %s is outside the workspace", param, r), "")
			v.paths = append(v.paths, r)
		}
		return
	}
	if within(g.ws, r, true) || slices.ContainsFunc(g.readable, func(root string) bool { return within(root, r, true) }) {
		return
	}
	v.ask(fmt.Sprintf("%s %s is outside the workspace", param, r), "add the folder to read_paths in the profile")
	v.paths = append(v.paths, r)
}

func (g *WorkspaceGuard) checkCommand(v *verdict, cmd string) {
	for _, p := range commandPaths(cmd) {
		if filepath.Clean(p) == "/" {
			v.ask("the command names / (the root folder)", "")
			v.paths = append(v.paths, "/")
			continue
		}
		r, err := resolve(g.ws, p)
		otherHome := strings.HasPrefix(p, "~") && p != "~" && !strings.HasPrefix(p, "~/")
		switch {
		case err != nil || otherHome:
			r = p // another user's home, or not a plain path: judged as written
		case within(r, g.ws, true):
			// The workspace itself or a folder holding it: never safe.
		case within(g.ws, r, false) || slices.ContainsFunc(g.safe, func(s string) bool { return within(s, r, true) }):
			continue
		}
		v.ask(fmt.Sprintf("the command names %s, outside the workspace", r), "add an exec rule allowing the program to the profile")
		v.paths = append(v.paths, r)
	}
}

func (g *WorkspaceGuard) checkURL(v *verdict, effect sdk.Effect, raw string) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		v.ask(fmt.Sprintf("the URL %q does not parse", raw), "")
		return
	}
	scheme := strings.ToLower(u.Scheme)
	if effect == sdk.EffectBrowser {
		if scheme != "http" && scheme != "https" {
			v.ask(fmt.Sprintf("the browser would open a %s: URL", scheme), "")
		}
		return
	}
	host := strings.ToLower(u.Hostname())
	for _, pat := range g.netAllow {
		if ok, _ := path.Match(strings.ToLower(pat), host); ok && host != "" {
			return
		}
	}
	v.ask(fmt.Sprintf("the call reaches %q, a host the profile does not allow", host),
		fmt.Sprintf("add %s to network.allow in the profile", host))
}

// commandPaths returns the words of a shell command that name a path the
// guard must judge: absolute, home-relative or climbing out with "..",
// including the value of --opt=/path and VAR=/path words.
func commandPaths(cmd string) []string {
	var words []string
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil {
		words = strings.Fields(cmd)
	} else {
		syntax.Walk(f, func(n syntax.Node) bool {
			switch w := n.(type) {
			case *syntax.Word:
				words = append(words, wordText(w))
			case *syntax.Assign:
				if w.Value != nil {
					words = append(words, wordText(w.Value))
				}
			}
			return true
		})
	}
	var out []string
	for _, w := range words {
		cands := []string{w}
		if i := strings.IndexByte(w, '='); i >= 0 {
			cands = append(cands, w[i+1:])
		}
		for _, c := range cands {
			if strings.HasPrefix(c, "/") || strings.HasPrefix(c, "~") || c == ".." || strings.HasPrefix(c, "../") {
				out = append(out, c)
			}
		}
	}
	return out
}

// wordText renders the literal parts of a word; expansions become "$".
func wordText(w *syntax.Word) string {
	var b strings.Builder
	var part func(p syntax.WordPart)
	part = func(p syntax.WordPart) {
		switch x := p.(type) {
		case *syntax.Lit:
			b.WriteString(x.Value)
		case *syntax.SglQuoted:
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				part(q)
			}
		default:
			b.WriteString("$")
		}
	}
	for _, p := range w.Parts {
		part(p)
	}
	return b.String()
}

var errNotPlain = errors.New("NUL bytes and file:// URLs are refused")

// resolve makes p absolute (relative to root), expands ~, cleans it and
// resolves the symlinks of its nearest existing ancestor.
func resolve(root, p string) (string, error) {
	if strings.ContainsRune(p, 0) || strings.HasPrefix(strings.ToLower(p), "file://") {
		return "", errNotPlain
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("expand ~: %w", err)
		}
		p = filepath.Join(home, p[1:])
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	p = filepath.Clean(p)
	rest := ""
	for cur := p; ; {
		if _, err := os.Lstat(cur); err == nil {
			real, err := filepath.EvalSymlinks(cur)
			if err != nil {
				return p, nil // a dangling link or a loop: judged by its own path
			}
			return filepath.Join(real, rest), nil
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

func resolveRoot(ws string) string {
	if ws == "" {
		ws, _ = os.Getwd()
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return filepath.Clean(ws)
	}
	r, err := resolve("/", abs)
	if err != nil {
		return abs
	}
	return r
}

// within reports whether p is root or below it; root itself counts only
// when self is true (for writes and commands the workspace itself is outside).
func within(root, p string, self bool) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	if rel == "." {
		return self
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
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
		return strings.EqualFold(x, "true")
	}
	return false
}
