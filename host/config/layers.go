package config

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/policy"
)

// The authority a layer carries, lowest first; the project sits apart: it
// can only narrow.
const (
	whoBuiltin = "builtin"
	whoUser    = "user"
	whoEnv     = "env"
	whoFlags   = "flags"
	whoProject = "project"
	whoManaged = "managed"
)

// neutralKeys grant nothing: they shape the listing, not what runs. A
// project layer sets them like any other layer.
var neutralKeys = []string{"deferred", "schema_budget_bytes", "tiers"}

// origin labels the layer in Loaded.Origins.
func (ly layer) origin() string {
	switch ly.who {
	case whoBuiltin, whoEnv, whoFlags, "":
		return ly.source
	}
	return ly.who + " " + ly.label
}

// recordOrigins notes ly as the origin of each key it sets: maps merge, so
// their origins add up; any other value replaces the lower ones.
func recordOrigins(origins map[string][]string, ly layer, data map[string]any) {
	for key, v := range data {
		if key == keyName || key == keyDescription {
			continue
		}
		if v == nil {
			delete(origins, key)
			continue
		}
		if key == keySandbox {
			sandboxOrigins(origins, ly, v)
			continue
		}
		if key == keyNetwork {
			networkOrigins(origins, ly, v)
			continue
		}
		if key == "tiers" || key == keyPlugins {
			addOrigin(origins, key, ly)
			continue
		}
		origins[key] = []string{ly.origin()}
	}
}

func addOrigin(origins map[string][]string, key string, ly layer) {
	if o := ly.origin(); !slices.Contains(origins[key], o) {
		origins[key] = append(origins[key], o)
	}
}

// neutralOnly keeps the keys of a project layer that grant nothing.
func neutralOnly(ly layer) layer {
	data := map[string]any{}
	for _, k := range neutralKeys {
		if v, ok := ly.data[k]; ok {
			data[k] = v
		}
	}
	ly.data = data
	return ly
}

// narrow applies a project layer to p, which it may only narrow: its deny
// globs, exec deny/ask rules and network.deny entries join p's (and its
// network.unlisted: deny holds), its families and grant intersect p's; whatever else it sets that grants something (read_paths,
// skill_dirs, network.allow, plugins, exec allow rules, a family or grant
// p lacks) is dropped and named in a warning. null and [] clear nothing.
func (l *loader) narrow(p *Profile, ly layer, origins map[string][]string) {
	q, err := decode(withoutKey(withoutKey(withoutKey(ly.data, keyProfile), keyName), keyDescription))
	if err != nil {
		return // check decoded it once already
	}
	var dropped, cleared []string
	for _, key := range sortedKeys(ly.data) {
		if v := ly.data[key]; (v == nil || isEmpty(v) || isEmpty(ruleList(v))) && !slices.Contains(neutralKeys, key) && key != keyProfile {
			cleared = append(cleared, key)
			continue
		}
		switch key {
		case keyProfile, keyName, keyDescription, "deferred", "schema_budget_bytes", "tiers":
		case "families":
			if len(q.Families) == 0 {
				continue
			}
			have := effectiveFamilies(p.Families)
			keep, extra := splitBy(q.Families, func(f string) bool { return slices.Contains(have, f) })
			if len(extra) > 0 {
				dropped = append(dropped, "families "+strings.Join(extra, ", "))
			}
			if len(keep) == 0 {
				continue
			}
			if !slices.Equal(sortedCopy(keep), sortedCopy(have)) {
				p.Families = keep
				addOrigin(origins, key, ly)
			}
		case "grant":
			if len(q.Grant) == 0 {
				continue
			}
			if len(p.Grant) == 0 {
				p.Grant = slices.Clone(q.Grant)
				addOrigin(origins, key, ly)
				continue
			}
			both := intersectGlobs(p.Grant, q.Grant)
			if len(both) == 0 {
				dropped = append(dropped, "grant (it shares no tool with the grant above it)")
				continue
			}
			if !slices.Equal(both, p.Grant) {
				p.Grant = both
				addOrigin(origins, key, ly)
			}
		case "deny":
			if n := len(p.Deny); mergeStrings(&p.Deny, q.Deny) > n {
				addOrigin(origins, key, ly)
			}
		case keyExec:
			var allows int
			for _, r := range q.Exec.Rules {
				if r.Action == policy.ExecAllow {
					allows++
					continue
				}
				if !slices.ContainsFunc(p.Exec.Rules, func(o policy.ExecRule) bool { return sameRule(o, r) }) {
					p.Exec.Rules = append(p.Exec.Rules, r)
					addOrigin(origins, key, ly)
				}
			}
			if allows > 0 {
				dropped = append(dropped, fmt.Sprintf("%d exec allow rule(s)", allows))
			}
		case keyNetwork:
			// Only denies: a deny entry, or network.unlisted: deny.
			if len(q.Network.Allow) > 0 {
				dropped = append(dropped, keyNetwork+".allow")
			}
			for _, e := range q.Network.Deny {
				if !slices.Contains(p.Network.Deny, e) {
					p.Network.Deny = append(p.Network.Deny, e)
					addOrigin(origins, entryKey("deny", e), ly)
				}
			}
			switch q.Network.Unlisted {
			case policy.NetworkDeny:
				if p.Network.Unlisted != policy.NetworkDeny {
					p.Network.Unlisted = policy.NetworkDeny
					addOrigin(origins, keyNetwork+".unlisted", ly)
				}
			case policy.NetworkAsk:
				if p.Network.Unlisted == policy.NetworkDeny {
					dropped = append(dropped, keyNetwork+".unlisted: ask")
				}
			}
		case keySandbox:
			dropped = append(dropped, narrowSandbox(p, q.Sandbox, ly.data[key], func(sub string) {
				addOrigin(origins, keySandbox+"."+sub, ly)
			}, l.socketPath)...)
		case keyAudit:
			// Not a widening to drop but no project's to set at all.
			l.warnings = append(l.warnings, projectAuditWarning(ly.label))
		case keyPlugins:
			// Switching a plugin off narrows; any other setting names what
			// a plugin runs, and switching one on undoes a higher layer.
			for _, name := range sortedKeys(q.Plugins) {
				for _, k := range sortedKeys(q.Plugins[name]) {
					if k == PluginEnabledKey && q.Plugins[name][k] == "false" {
						if switchOff(p, name) {
							addOrigin(origins, key, ly)
						}
						continue
					}
					dropped = append(dropped, keyPlugins+"."+name+"."+k)
				}
			}
		case keyPluginDev:
			// Not a widening to drop but no project's to set at all: its
			// binaries would run unpinned.
			l.warnings = append(l.warnings, fmt.Sprintf("%s: %s refused: a project may not set a plugin dev override (its binaries would run without a pin check); "+
				"set it in %s or pass --plugin-dev-dir", ly.label, keyPluginDev, l.display(l.userDir+"/"+configFileName)))
		case keyReadPaths, keySkillDirs:
			if v := ly.data[key]; v != nil && !isEmpty(v) {
				dropped = append(dropped, key)
			}
		default:
			// A key this code does not know to be a narrowing widens until
			// shown otherwise.
			dropped = append(dropped, key)
		}
	}
	if len(cleared) > 0 {
		l.warnings = append(l.warnings, fmt.Sprintf("%s: %s: null or empty clears nothing from a project; the layers above keep theirs",
			ly.label, strings.Join(cleared, ", ")))
	}
	if len(dropped) > 0 {
		l.warnings = append(l.warnings, fmt.Sprintf("%s: %s ignored: a project's .yagent may only narrow the profile "+
			"(deny tools, add exec deny or ask rules, drop families); to widen it, put the setting in %s",
			ly.label, strings.Join(dropped, ", "), l.display(l.userDir+"/"+configFileName)))
	}
}

// ceiling applies the managed layer to p, which no lower layer may widen:
// deny globs, exec rules, read_paths, skill_dirs and network.deny join p's
// (the admin's own grants are allowed); families and grant bound p's;
// network.allow joins p's, or bounds it when the admin refuses unlisted
// hosts (ceilNetwork); listing keys and plugin settings the admin sets win.
func (l *loader) ceiling(p *Profile, ly layer, origins map[string][]string) {
	q, err := decode(withoutKey(withoutKey(withoutKey(ly.data, keyProfile), keyName), keyDescription))
	if err != nil {
		return
	}
	for _, key := range sortedKeys(ly.data) {
		touched := true
		switch key {
		case keyProfile, keyName, keyDescription:
			touched = false
		case "families":
			if len(q.Families) == 0 {
				touched = false
				break
			}
			have := effectiveFamilies(p.Families)
			keep, _ := splitBy(have, func(f string) bool { return slices.Contains(q.Families, f) })
			if len(keep) == 0 {
				l.warnings = append(l.warnings, fmt.Sprintf("%s: families: none of %s is allowed; using the managed families %s",
					ly.label, strings.Join(have, ", "), strings.Join(q.Families, ", ")))
				keep = slices.Clone(q.Families)
			}
			p.Families = keep
		case "grant":
			if len(q.Grant) == 0 {
				touched = false
				break
			}
			both := intersectGlobs(p.Grant, q.Grant)
			if len(p.Grant) > 0 && len(both) == 0 {
				l.warnings = append(l.warnings, fmt.Sprintf("%s: grant: none of %s is allowed; using the managed grant %s",
					ly.label, strings.Join(p.Grant, ", "), strings.Join(q.Grant, ", ")))
			}
			if len(p.Grant) == 0 || len(both) == 0 {
				both = slices.Clone(q.Grant)
			}
			p.Grant = both
		case "deny":
			mergeStrings(&p.Deny, q.Deny)
		case keyExec:
			// A lower allow rule on a program the admin asks about could
			// outrank that ask (the guard matches options as a set, so argv
			// prefixes cannot tell which would win): every such allow is
			// dropped. Without it the program still runs where no ask
			// matches; there is no blacklist.
			p.Exec.Rules = slices.DeleteFunc(p.Exec.Rules, func(r policy.ExecRule) bool {
				return r.Action == policy.ExecAllow && slices.ContainsFunc(q.Exec.Rules, func(m policy.ExecRule) bool {
					return m.Action == policy.ExecAsk && path.Base(m.Program) == path.Base(r.Program)
				})
			})
			for _, r := range q.Exec.Rules {
				if !slices.ContainsFunc(p.Exec.Rules, func(o policy.ExecRule) bool { return sameRule(o, r) }) {
					p.Exec.Rules = append(p.Exec.Rules, r)
				}
			}
		case keyNetwork:
			touched = false
			l.ceilNetwork(p, q.Network, ly, origins)
		case keyReadPaths:
			mergeStrings(&p.ReadPaths, q.ReadPaths)
		case keySkillDirs:
			mergeStrings(&p.SkillDirs, q.SkillDirs)
		case keyAudit:
			touched = false
			ceilAudit(p, q.Audit, func(sub string) { addOrigin(origins, keyAudit+"."+sub, ly) })
		case keySandbox:
			touched = false
			ceilSandbox(p, q.Sandbox, ly.data[key], func(sub string) { addOrigin(origins, keySandbox+"."+sub, ly) }, l.socketPath)
		case keyPlugins:
			for fam, kv := range q.Plugins {
				for k, v := range kv {
					if k == PluginEnabledKey {
						// A ceiling: the admin switches a plugin off, never
						// back on over a lower layer's off.
						if v == "false" {
							switchOff(p, fam)
						}
						continue
					}
					setPlugin(p, fam, k, v)
				}
			}
		case keyPluginDev:
			touched = q.PluginDevDir != ""
			if touched {
				p.PluginDevDir = q.PluginDevDir
			}
		case "tiers":
			for k, v := range q.Tiers {
				if p.Tiers == nil {
					p.Tiers = map[string]string{}
				}
				p.Tiers[k] = v
			}
		case "deferred":
			touched = q.Deferred != ""
			if touched {
				p.Deferred = q.Deferred
			}
		case "schema_budget_bytes":
			touched = q.SchemaBudgetBytes != 0
			if touched {
				p.SchemaBudgetBytes = q.SchemaBudgetBytes
			}
		default:
			touched = false
		}
		if touched {
			addOrigin(origins, key, ly)
		}
	}
}

// switchOff sets plugins.NAME.enabled to false in p and reports whether it
// was on.
func switchOff(p *Profile, name string) bool {
	if !p.PluginEnabled(name) {
		return false
	}
	setPlugin(p, name, PluginEnabledKey, "false")
	return true
}

func setPlugin(p *Profile, name, k, v string) {
	if p.Plugins == nil {
		p.Plugins = map[string]map[string]string{}
	}
	if p.Plugins[name] == nil {
		p.Plugins[name] = map[string]string{}
	}
	p.Plugins[name][k] = v
}

// effectiveFamilies is what families enables: empty means every one.
func effectiveFamilies(fams []string) []string {
	if len(fams) == 0 {
		return toolspec.Families()
	}
	return slices.Clone(fams)
}

// splitBy splits list into the elements keep accepts and the rest.
func splitBy(list []string, keep func(string) bool) (in, out []string) {
	for _, s := range list {
		if keep(s) {
			in = append(in, s)
		} else {
			out = append(out, s)
		}
	}
	return in, out
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return slices.Compact(c)
}

// mergeStrings appends to *dst the elements of add it lacks and returns
// the new length.
// ceilNetwork applies the managed layer's network rules q to p: its deny
// entries hold under every layer (and under -y, as every deny does); with
// unlisted: deny its allow list is the ceiling, so the lower layers' allow
// entries only narrow it (those it does not cover are dropped, and if none
// is left the admin's list stands); otherwise its allow entries join p's.
func (l *loader) ceilNetwork(p *Profile, q policy.NetworkRules, ly layer, origins map[string][]string) {
	for _, e := range q.Deny {
		if !slices.Contains(p.Network.Deny, e) {
			p.Network.Deny = append(p.Network.Deny, e)
		}
		origins[entryKey("deny", e)] = []string{ly.origin()}
	}
	if q.Unlisted != "" {
		p.Network.Unlisted = q.Unlisted
		origins[keyNetwork+".unlisted"] = []string{ly.origin()}
	}
	if q.Unlisted != policy.NetworkDeny {
		for _, e := range q.Allow {
			mergeStrings(&p.Network.Allow, []string{e})
			addOrigin(origins, entryKey("allow", e), ly)
		}
		return
	}
	keep, out := splitBy(p.Network.Allow, func(e string) bool { return policy.EntryWithin(e, q.Allow) })
	for _, e := range out {
		delete(origins, entryKey("allow", e))
	}
	if len(keep) == 0 {
		if len(out) > 0 {
			l.warnings = append(l.warnings, fmt.Sprintf("%s: network.allow: none of %s is within the managed network.allow, which refuses unlisted hosts; using the managed list %s",
				ly.label, strings.Join(out, ", "), strings.Join(q.Allow, ", ")))
		}
		keep = slices.Clone(q.Allow)
		for _, e := range keep {
			origins[entryKey("allow", e)] = []string{ly.origin()}
		}
	}
	p.Network.Allow = keep
}

// entryKey is the key Loaded.Origins names a network list's entry by.
func entryKey(list, entry string) string {
	return keyNetwork + "." + list + "[" + entry + "]"
}

// networkOrigins notes ly as the origin of each entry of the network
// lists it sets (a layer's list replaces the lower ones', so their
// entries' origins go) and of network.unlisted.
func networkOrigins(origins map[string][]string, ly layer, v any) {
	m, _ := v.(map[string]any)
	for _, list := range []string{"allow", "deny"} {
		x, set := m[list]
		if !set && m != nil {
			continue
		}
		for k := range origins {
			if strings.HasPrefix(k, keyNetwork+"."+list+"[") {
				delete(origins, k)
			}
		}
		var entries []string
		switch x := x.(type) {
		case []string:
			entries = x
		case []any:
			for _, e := range x {
				if s, ok := e.(string); ok {
					entries = append(entries, s)
				}
			}
		}
		for _, e := range entries {
			origins[entryKey(list, e)] = []string{ly.origin()}
		}
	}
	if u, set := m["unlisted"]; set || m == nil {
		delete(origins, keyNetwork+".unlisted")
		if u != nil {
			origins[keyNetwork+".unlisted"] = []string{ly.origin()}
		}
	}
}

func mergeStrings(dst *[]string, add []string) int {
	for _, s := range add {
		if !slices.Contains(*dst, s) {
			*dst = append(*dst, s)
		}
	}
	return len(*dst)
}

// intersectGlobs approximates the tools both grant lists match from below:
// a glob of one side is kept when a glob of the other side matches it as a
// name. Exact for names; for two globs it may keep less, never more.
func intersectGlobs(a, b []string) []string {
	var out []string
	covered := func(x string, by []string) bool {
		return slices.ContainsFunc(by, func(g string) bool {
			ok, _ := path.Match(g, x)
			return g == x || ok
		})
	}
	for _, side := range [][2][]string{{a, b}, {b, a}} {
		for _, x := range side[0] {
			if covered(x, side[1]) && !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
	}
	return out
}

func sameRule(a, b policy.ExecRule) bool {
	return a.Action == b.Action && a.Program == b.Program && a.Interactive == b.Interactive && slices.Equal(a.Args, b.Args)
}

// ruleList is the rules list of an exec value, nil when it has none.
func ruleList(v any) any {
	if m, ok := v.(map[string]any); ok {
		if r, ok := m["rules"]; ok {
			if r == nil {
				return []any{}
			}
			return r
		}
	}
	return nil
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}
