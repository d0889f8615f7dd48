package config

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/internal/suggest"
	"github.com/yagent/yagent/policy"
)

// Profile file keys that the loader treats specially.
const (
	keyName        = "name"
	keyDescription = "description"
	keyProfile     = "profile"
	keySkillDirs   = "skill_dirs"
	keyReadPaths   = "read_paths"
	keyPlugins     = "plugins"
	keyNetwork     = "network"
	keyExec        = "exec"
	keyPluginDev   = "plugin_dev_dir"
)

var profileNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// validProfileName reports whether name may name a profile (and its file).
func validProfileName(name string) bool { return profileNameRE.MatchString(name) }

// Validate checks a profile built in code as Load checks a profile file,
// returning every bad value, each a *KeyError, joined. Its name is a
// label there, not a file's: any name passes.
func (p *Profile) Validate() error {
	q := *p
	q.Name = ""
	return errors.Join(validate("profile "+p.Name, &q)...)
}

// validate checks the values of one decoded layer; keys the layer does not
// set are zero and pass. It returns one *KeyError per bad value.
func validate(src string, p *Profile) []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &KeyError{Source: src, Key: key, Problem: fmt.Sprintf(format, args...)})
	}
	if p.Name != "" && !validProfileName(p.Name) {
		bad(keyName, "invalid profile name %q (want lowercase letters, digits, - and _)", p.Name)
	}
	families := toolspec.Families()
	for i, f := range p.Families {
		if !slices.Contains(families, f) {
			bad(fmt.Sprintf("families[%d]", i), "unknown family %q (want %s; a custom plugin is always on unless "+
				"plugins.%s.enabled is false)", f, strings.Join(families, ", "), f)
		}
	}
	for _, list := range []struct {
		key   string
		globs []string
	}{{"grant", p.Grant}, {"deny", p.Deny}} {
		for i, g := range list.globs {
			if _, err := path.Match(g, ""); g == "" || err != nil {
				bad(fmt.Sprintf("%s[%d]", list.key, i), "invalid glob %q over tool names", g)
			}
		}
	}
	for _, name := range sortedKeys(p.Tiers) {
		key := "tiers." + name
		s, ok := toolspec.Lookup(name)
		switch {
		case !ok:
			hint := ""
			if c := suggest.Closest(name, staticNames()); c != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", c)
			}
			bad(key, "%q is not a static tool; only static tools have a tier to override (external tools are always cold)%s", name, hint)
		case s.Family == toolspec.FamilyHost:
			bad(key, "%s is a host tool and always hot", name)
		default:
			if _, err := toolspec.ParseTier(p.Tiers[name]); err != nil {
				bad(key, "invalid tier %q (want hot, warm or cold)", p.Tiers[name])
			}
		}
	}
	switch p.Deferred {
	case "", DeferredAuto, DeferredOn, DeferredOff:
	default:
		bad("deferred", "invalid value %q (want auto, on or off)", p.Deferred)
	}
	if p.SchemaBudgetBytes < 0 {
		bad("schema_budget_bytes", "invalid value %d (want 0 for the default, or a positive number of bytes)", p.SchemaBudgetBytes)
	}
	for _, list := range []struct {
		key     string
		entries []string
	}{{keyNetwork + ".allow", p.Network.Allow}, {keyNetwork + ".deny", p.Network.Deny}} {
		for i, h := range list.entries {
			if err := policy.CheckNetworkEntry(h); err != nil {
				bad(fmt.Sprintf("%s[%d]", list.key, i), "invalid entry: %v", err)
			}
		}
	}
	switch p.Network.Unlisted {
	case "", policy.NetworkAsk, policy.NetworkDeny:
	default:
		bad(keyNetwork+".unlisted", "invalid value %q (want ask or deny)", p.Network.Unlisted)
	}
	for i, r := range p.Exec.Rules {
		key := fmt.Sprintf("exec.rules[%d]", i)
		switch r.Action {
		case policy.ExecAllow, policy.ExecAsk, policy.ExecDeny:
		default:
			bad(key+".action", "invalid action %q (want allow, ask or deny)", r.Action)
		}
		if r.Program == "" || strings.Contains(r.Program, "/") {
			bad(key+".program", "invalid program %q (want a base name such as rm)", r.Program)
		}
	}
	for _, list := range []struct {
		key   string
		paths []string
	}{{keySkillDirs, p.SkillDirs}, {"read_paths", p.ReadPaths}} {
		for i, d := range list.paths {
			if strings.TrimSpace(d) == "" || strings.ContainsRune(d, 0) {
				bad(fmt.Sprintf("%s[%d]", list.key, i), "invalid path %q", d)
			}
		}
	}
	for _, name := range sortedKeys(p.Plugins) {
		if v, ok := p.Plugins[name][PluginEnabledKey]; ok && v != "true" && v != "false" {
			bad(keyPlugins+"."+name+"."+PluginEnabledKey, "invalid value %q (want true or false)", v)
		}
	}
	validateSandbox(p, bad)
	validateAudit(p, bad)
	return errs
}

func staticNames() []string {
	var names []string
	for _, s := range toolspec.All() {
		names = append(names, s.Name)
	}
	return names
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
