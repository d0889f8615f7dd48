package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/yagent/yagent/policy"
)

const keySandbox = "sandbox"

// SandboxMode returns the profile's sandbox mode, on when unset.
func (p *Profile) SandboxMode() string {
	if p == nil {
		return policy.SandboxOn
	}
	return policy.SandboxMode(p.Sandbox.Mode)
}

// SandboxNetwork returns the profile's network setting for commands, on
// when unset.
func (p *Profile) SandboxNetwork() string {
	if p == nil {
		return policy.NetworkOn
	}
	return policy.NetworkMode(p.Sandbox.Network)
}

// expandSandbox turns the shorthand `sandbox: off` into `sandbox: {mode:
// off}`, and YAML booleans into on and off, before the keys are checked.
func expandSandbox(data map[string]any) {
	onOff := func(v any) any {
		if b, ok := v.(bool); ok {
			if b {
				return policy.SandboxOn
			}
			return policy.SandboxOff
		}
		return v
	}
	switch v := data[keySandbox].(type) {
	case string, bool:
		data[keySandbox] = map[string]any{"mode": onOff(v)}
	case map[string]any:
		for _, k := range []string{"mode", "network"} {
			if x, ok := v[k]; ok {
				v[k] = onOff(x)
			}
		}
	}
}

// validateSandbox checks one layer's sandbox values.
func validateSandbox(p *Profile, bad func(key, format string, args ...any)) {
	switch p.Sandbox.Mode {
	case "", policy.SandboxOn, policy.SandboxOff, policy.SandboxRequired:
	default:
		bad("sandbox.mode", "invalid value %q (want on, off or required)", p.Sandbox.Mode)
	}
	switch p.Sandbox.Network {
	case "", policy.NetworkOn, policy.NetworkProxy, policy.NetworkOff:
	default:
		bad("sandbox.network", "invalid value %q (want off, proxy or on)", p.Sandbox.Network)
	}
	for _, list := range []struct {
		key   string
		paths []string
	}{{"sandbox.read", p.Sandbox.Read}, {"sandbox.write", p.Sandbox.Write}} {
		for i, d := range list.paths {
			if strings.TrimSpace(d) == "" || strings.ContainsRune(d, 0) {
				bad(fmt.Sprintf("%s[%d]", list.key, i), "invalid path %q", d)
			}
		}
	}
	for _, n := range sandboxNumbers(p) {
		switch {
		case *n.value < 0:
			bad("sandbox."+n.key, "invalid value %d (want 0 for %s, or a positive number%s)", *n.value, n.none, n.unit)
		case *n.value > n.most:
			bad("sandbox."+n.key, "invalid value %d (want at most %d%s)", *n.value, n.most, n.unit)
		}
	}
	for i, s := range p.Sandbox.UnixSockets {
		if strings.ContainsRune(s, 0) || !filepath.IsAbs(s) && !strings.HasPrefix(s, "~/") {
			bad(fmt.Sprintf("sandbox.unix_sockets[%d]", i), "invalid path %q (want an absolute path to a socket, or one under ~/)", s)
		}
	}
}

// sandboxNumber is one of the bounds of sandbox: its key, its value in a
// profile, what 0 means and its greatest value.
type sandboxNumber struct {
	key   string
	value *int
	none  string
	unit  string
	most  int
}

// sandboxNumbers are p's bounds: sandbox.pids, memory_mb and tmp_size_mb.
func sandboxNumbers(p *Profile) []sandboxNumber {
	return []sandboxNumber{
		// The kernel's own ceiling on pids (PID_MAX_LIMIT).
		{key: "pids", value: &p.Sandbox.Pids, none: "no bound", most: 1 << 22},
		{key: "memory_mb", value: &p.Sandbox.MemoryMB, none: "no bound", unit: " of MiB", most: 1 << 30},
		{key: "tmp_size_mb", value: &p.Sandbox.TmpSizeMB, none: "no size of its own", unit: " of MiB", most: 1 << 30},
	}
}

// boundText says a bound's value as a warning names it.
func boundText(n int) string {
	if n == 0 {
		return "0, none"
	}
	return strconv.Itoa(n)
}

// narrowSandbox applies a project's sandbox to p: it may raise the mode,
// turn the network off, lower a bound (a positive number below p's, or
// any where p has none) and remove Unix sockets from p's list (sock says
// a socket's path as the list holds it); anything else it sets would
// widen what the processes may do, and is returned to be named.
func narrowSandbox(p *Profile, q policy.SandboxRules, data any, record func(sub string), sock func(string) string) (dropped []string) {
	m, _ := data.(map[string]any)
	qn := sandboxNumbers(&Profile{Sandbox: q})
	for i, n := range sandboxNumbers(p) {
		if v, ok := m[n.key]; !ok || v == nil {
			continue
		}
		want := *qn[i].value
		switch {
		case want == *n.value:
		case want > 0 && (*n.value == 0 || want < *n.value):
			*n.value = want
			record(n.key)
		default:
			dropped = append(dropped, fmt.Sprintf("sandbox.%s %s (a project may only lower it below %s)", n.key, boundText(want), boundText(*n.value)))
		}
	}
	if v, ok := m["unix_sockets"]; ok && v != nil {
		keep, extra := splitBy(q.UnixSockets, func(s string) bool { return hasSocket(p.Sandbox.UnixSockets, s, sock) })
		if len(extra) > 0 {
			dropped = append(dropped, "sandbox.unix_sockets "+strings.Join(extra, ", ")+" (a project may only remove sockets from the list)")
		}
		if kept := keepSockets(p.Sandbox.UnixSockets, keep, sock); len(kept) < len(p.Sandbox.UnixSockets) {
			p.Sandbox.UnixSockets = kept
			record("unix_sockets")
		}
	}
	if q.Mode != "" {
		if policy.SandboxRank(q.Mode) > policy.SandboxRank(p.SandboxMode()) {
			p.Sandbox.Mode = q.Mode
			record("mode")
		} else if policy.SandboxRank(q.Mode) < policy.SandboxRank(p.SandboxMode()) {
			dropped = append(dropped, fmt.Sprintf("sandbox.mode %s (a project may only raise it above %s)", q.Mode, p.SandboxMode()))
		}
	}
	if q.Network != "" {
		if policy.NetworkRank(q.Network) < policy.NetworkRank(p.SandboxNetwork()) {
			p.Sandbox.Network = q.Network
			record("network")
		} else if policy.NetworkRank(q.Network) > policy.NetworkRank(p.SandboxNetwork()) {
			dropped = append(dropped, fmt.Sprintf("sandbox.network %s (a project may only lower it below %s)", q.Network, p.SandboxNetwork()))
		}
	}
	// Workspace content is data, never policy: a project names no path
	// the processes may reach, even one they may reach anyway.
	for _, k := range []string{"read", "write"} {
		if v, ok := m[k]; ok && v != nil && !isEmpty(v) {
			dropped = append(dropped, "sandbox."+k)
		}
	}
	return dropped
}

// ceilSandbox applies the managed sandbox to p: its mode and network are
// a floor of strictness no lower layer went under; its paths are the
// admin's own grants and join p's; its bounds cap p's (one p has not set
// takes the admin's), and its list of Unix sockets bounds p's: a socket
// stays only where both name it (sock says a socket's path as the lists
// hold it; data says which keys the admin set).
func ceilSandbox(p *Profile, q policy.SandboxRules, data any, record func(sub string), sock func(string) string) {
	qn := sandboxNumbers(&Profile{Sandbox: q})
	for i, n := range sandboxNumbers(p) {
		if most := *qn[i].value; most > 0 && (*n.value == 0 || *n.value >= most) {
			*n.value = most
			record(n.key)
		}
	}
	if m, _ := data.(map[string]any); m["unix_sockets"] != nil {
		if kept := keepSockets(p.Sandbox.UnixSockets, q.UnixSockets, sock); len(kept) < len(p.Sandbox.UnixSockets) {
			p.Sandbox.UnixSockets = kept
			record("unix_sockets")
		}
	}
	// The admin's mode is named as the origin only where it is the result.
	if q.Mode != "" && policy.SandboxRank(q.Mode) >= policy.SandboxRank(p.SandboxMode()) {
		p.Sandbox.Mode = q.Mode
		record("mode")
	}
	if q.Network != "" && policy.NetworkRank(q.Network) <= policy.NetworkRank(p.SandboxNetwork()) {
		p.Sandbox.Network = q.Network
		record("network")
	}
	if len(q.Read) > 0 {
		mergeStrings(&p.Sandbox.Read, q.Read)
		record("read")
	}
	if len(q.Write) > 0 {
		mergeStrings(&p.Sandbox.Write, q.Write)
		record("write")
	}
}

// sandboxOrigins records ly as the origin of each sandbox key it sets.
func sandboxOrigins(origins map[string][]string, ly layer, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		for k := range origins {
			if strings.HasPrefix(k, keySandbox+".") {
				delete(origins, k)
			}
		}
		return
	}
	for sub, x := range m {
		key := keySandbox + "." + sub
		if x == nil {
			delete(origins, key)
			continue
		}
		origins[key] = []string{ly.origin()}
	}
}

// resolvePaths makes each path absolute with symlinks resolved, once: a
// path that does not exist yet keeps its missing tail under its nearest
// existing ancestor, resolved.
func resolvePaths(paths []string) []string {
	var out []string
	for _, p := range paths {
		r := policy.ResolvePath(p)
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// hasSocket reports whether list names socket s (as sock says each).
func hasSocket(list []string, s string, sock func(string) string) bool {
	return slices.ContainsFunc(list, func(x string) bool { return sock(x) == sock(s) })
}

// keepSockets returns the sockets of list that allowed names too.
func keepSockets(list, allowed []string, sock func(string) string) []string {
	var out []string
	for _, s := range list {
		if hasSocket(allowed, s, sock) {
			out = append(out, s)
		}
	}
	return out
}
