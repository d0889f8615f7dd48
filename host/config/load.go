package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/maps"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/v2"
	"go.yaml.in/yaml/v3"

	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/internal/suggest"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/profiles"
)

// LoadOptions says where to look and what the caller sets on top.
type LoadOptions struct {
	// Profile is the base profile named by --profile; "" lets the
	// environment, the config files or the default ("coder") decide.
	Profile string
	// Workspace is the absolute path of the workspace; its .yagent folder
	// holds the project layer, which only narrows. "" means no project layer.
	Workspace string
	// Home is the user's home folder; "" means os.UserHomeDir().
	Home string
	// Env looks up environment variables; nil means os.LookupEnv.
	Env func(string) (string, bool)
	// Overrides are flag values by koanf key ("deferred",
	// "schema_budget_bytes", "network.allow", ...); they win over every
	// file but the managed layer.
	Overrides map[string]any
	// ManagedDir is the folder of the managed layer; "" means /etc/yagent
	// (see ManagedDir).
	ManagedDir string
	// ManagedOwner is a uid trusted besides root to own the managed layer;
	// 0 (root only) but in a test running as another user.
	ManagedOwner int
}

// Loaded is a resolved profile and where it came from.
type Loaded struct {
	Profile *Profile
	// Sources lists the layers used, lowest first: "builtin:NAME" for an
	// embedded profile, the absolute path of each file read, "env:VAR" for
	// each YAGENT_* variable applied, and "flags" when overrides were given.
	Sources []string
	// Layers labels the same layers as Origins does ("user
	// ~/.yagent/config.yaml", "managed /etc/yagent/config.yaml", ...).
	Layers []string
	// Origins names, for each key of the resolved profile, the layers its
	// value came from, lowest first, each as Origin labels it:
	// "builtin:coder", "user ~/.yagent/config.yaml", "env:YAGENT_FAMILIES",
	// "flags", "project /ws/.yagent/config.yaml",
	// "managed /etc/yagent/config.yaml".
	Origins map[string][]string
	// Warnings name what the project layer tried to widen and was dropped,
	// project profiles refused for their name, and ceilings that left a
	// lower layer's choice empty.
	Warnings []string
	// ManagedLock is the managed layer's plugins.lock, checked like the
	// rest of the layer; "" when it has none. A plugin it pins must match
	// it, whatever the user's lock says.
	ManagedLock string
}

// ProfileInfo describes one profile that can be selected.
type ProfileInfo struct {
	Name        string
	Description string
	// Source is "builtin" or the absolute path of the custom profile file.
	Source string
}

// Environment variables read by Load.
const (
	EnvProfile           = "YAGENT_PROFILE"
	EnvDeferred          = "YAGENT_DEFERRED"
	EnvSchemaBudgetBytes = "YAGENT_SCHEMA_BUDGET_BYTES"
	EnvFamilies          = "YAGENT_FAMILIES"
)

// builtinSource is the Source of an embedded profile.
const builtinSource = "builtin"

const (
	dirName        = ".yagent"
	configFileName = "config.yaml"
	profilesDir    = "profiles"
	skillsDir      = "skills"
)

// UserDir returns the user's yagent folder, home/.yagent; with home "" it
// uses os.UserHomeDir() and returns "" when that fails.
func UserDir(home string) string {
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		home = h
	}
	return filepath.Join(home, dirName)
}

// ProjectDir returns the project's yagent folder, workspace/.yagent.
func ProjectDir(workspace string) string { return filepath.Join(workspace, dirName) }

// layer is one set of keys from one place.
type layer struct {
	label  string // for errors: a path with ~, "$VAR", "flags"
	source string // for Loaded.Sources
	who    string // whoBuiltin, whoUser, ...: the authority it carries
	data   map[string]any
}

// loader holds what one Load, Names or Show call resolved from its options.
type loader struct {
	opts       LoadOptions
	home       string
	userDir    string
	projectDir string // "" when there is no project layer
	managed    *managed
	warnings   []string
}

func newLoader(opts LoadOptions) (*loader, error) {
	l := &loader{opts: opts, home: opts.Home, managed: &managed{profiles: map[string]string{}}}
	if l.home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("config: no home folder: %w", err)
		}
		l.home = h
	}
	if l.opts.Env == nil {
		l.opts.Env = os.LookupEnv
	}
	l.userDir = UserDir(l.home)
	if opts.Workspace != "" {
		if !filepath.IsAbs(opts.Workspace) {
			return nil, fmt.Errorf("config: workspace %q is not absolute", opts.Workspace)
		}
		// A workspace at the home folder has one .yagent folder, read once.
		if pd := ProjectDir(opts.Workspace); filepath.Clean(pd) != filepath.Clean(l.userDir) {
			l.projectDir = pd
		}
	}
	return l, nil
}

// Load resolves the profile selected by opts, layer over layer, and
// reports every unknown key and invalid value with the layer and key named.
func Load(opts LoadOptions) (*Loaded, error) {
	l, err := newLoader(opts)
	if err != nil {
		return nil, err
	}
	return l.load()
}

func (l *loader) load() (*Loaded, error) {
	m, err := l.readManaged()
	if err != nil {
		return nil, err
	}
	l.managed = m
	userCfg, hasUser, err := l.readFile(filepath.Join(l.userDir, configFileName), configShape())
	if err != nil {
		return nil, err
	}
	userCfg.who = whoUser
	var projCfg *layer
	if l.projectDir != "" {
		ly, ok, err := l.readFile(filepath.Join(l.projectDir, configFileName), configShape())
		if err != nil {
			return nil, err
		}
		if ok {
			ly.who = whoProject
			projCfg = &ly
		}
	}
	envLayers, err := l.envLayers()
	if err != nil {
		return nil, err
	}
	var flags *layer
	if len(l.opts.Overrides) > 0 {
		ly, err := l.flagLayer()
		if err != nil {
			return nil, err
		}
		flags = &ly
	}

	// The highest layer naming a profile chooses the base; the managed
	// config's name is the default. The project never chooses it: a
	// profile it names only narrows (below).
	name, chosenBy := profiles.Default, ""
	consider := func(ly *layer) {
		if v, ok := ly.data[keyProfile].(string); ok && v != "" {
			name, chosenBy = v, ly.label
		}
	}
	if m.config != nil {
		consider(m.config)
	}
	if hasUser {
		consider(&userCfg)
	}
	for i := range envLayers {
		consider(&envLayers[i])
	}
	if flags != nil {
		consider(flags)
	}
	if l.opts.Profile != "" {
		name, chosenBy = l.opts.Profile, "--profile"
	}
	l.warnShadowing()

	var overlays []layer // project layers, applied as narrowings
	shownName := name
	base, ok, err := l.baseLayer(name, chosenBy)
	if err != nil {
		return nil, err
	}
	if !ok {
		// A profile only the project defines narrows the default.
		ov, err := l.projectProfile(name, chosenBy)
		if err != nil {
			return nil, err
		}
		overlays = append(overlays, ov)
		name = profiles.Default
		if m.config != nil {
			if v, ok := m.config.data[keyProfile].(string); ok && v != "" {
				name = v
			}
		}
		if base, ok, err = l.baseLayer(name, "the managed default"); err != nil {
			return nil, err
		} else if !ok {
			return nil, l.unknownProfile(name, "the managed default")
		}
	}
	if projCfg != nil {
		if v, ok := projCfg.data[keyProfile].(string); ok && v != "" {
			ov, ok, err := l.baseLayer(v, projCfg.label)
			if err != nil {
				return nil, err
			}
			if !ok {
				if ov, err = l.projectProfile(v, projCfg.label); err != nil {
					return nil, err
				}
			}
			ov.who = whoProject
			ov.label = fmt.Sprintf("%s (profile %s)", projCfg.label, v)
			overlays = append(overlays, ov)
		}
		overlays = append(overlays, *projCfg)
	}

	// Keys that grant nothing (listing and budget) merge in layer order,
	// the project's between the user's and the environment's; the rest of
	// a project layer can only narrow.
	chain := []layer{base}
	for _, ov := range overlays[:len(overlays)-boolInt(projCfg != nil)] {
		chain = append(chain, neutralOnly(ov))
	}
	if hasUser {
		chain = append(chain, userCfg)
	}
	if projCfg != nil {
		chain = append(chain, neutralOnly(*projCfg))
	}
	chain = append(chain, envLayers...)
	if flags != nil {
		chain = append(chain, *flags)
	}

	k := koanf.New(".")
	out := &Loaded{Origins: map[string][]string{}}
	for _, ly := range chain {
		data := maps.Copy(ly.data)
		delete(data, keyProfile)
		if err := k.Load(confmap.Provider(data, ""), nil); err != nil {
			return nil, fmt.Errorf("config: %s: %w", ly.label, err)
		}
		out.addLayer(ly)
		recordOrigins(out.Origins, ly, data)
	}
	p, err := decode(k.Raw())
	if err != nil {
		return nil, fmt.Errorf("config: merged profile: %w", err)
	}
	if err := errors.Join(validate("merged profile", p)...); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	_, skillDirsSet := k.Raw()[keySkillDirs]
	for _, ov := range overlays {
		out.addLayer(ov)
		l.narrow(p, ov, out.Origins)
	}
	if base.who == whoManaged {
		// An admin's profile is as much a ceiling as the admin's config.
		l.ceiling(p, base, out.Origins)
	}
	if m.config != nil {
		out.addLayer(*m.config)
		l.ceiling(p, *m.config, out.Origins)
	}
	p.Name = shownName
	l.normalize(p, skillDirsSet)
	out.Profile = p
	out.Warnings = l.warnings
	out.ManagedLock = m.lock
	return out, nil
}

// addLayer lists ly in Sources and Layers, once.
func (ld *Loaded) addLayer(ly layer) {
	if !slices.Contains(ld.Sources, ly.source) {
		ld.Sources = append(ld.Sources, ly.source)
		ld.Layers = append(ld.Layers, ly.origin())
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// projectProfile reads the project's own profile name, refusing a name a
// higher layer or the built-ins use (warnShadowing named those).
func (l *loader) projectProfile(name, chosenBy string) (layer, error) {
	if l.projectDir != "" && !l.nameTaken(name) {
		ly, ok, err := l.readProfileFile(filepath.Join(l.projectDir, profilesDir, name+".yaml"), name)
		if err != nil {
			return layer{}, err
		}
		if ok {
			ly.who = whoProject
			return ly, nil
		}
	}
	return layer{}, l.unknownProfile(name, chosenBy)
}

// normalize fills defaults and makes paths absolute, so the resolved
// profile says what will happen.
func (l *loader) normalize(p *Profile, skillDirsSet bool) {
	if p.Deferred == "" {
		p.Deferred = DeferredAuto
	}
	if p.SchemaBudgetBytes == 0 {
		p.SchemaBudgetBytes = DefaultSchemaBudgetBytes
	}
	if len(p.Families) == 0 {
		p.Families = toolspec.Families()
	} else {
		slices.Sort(p.Families)
		p.Families = slices.Compact(p.Families)
	}
	for name, t := range p.Tiers {
		tier, _ := toolspec.ParseTier(t)
		p.Tiers[name] = tier.String()
	}
	if !skillDirsSet {
		// The defaults, then what the managed layer added.
		defaults := []string{filepath.Join(l.userDir, skillsDir)}
		if l.projectDir != "" {
			defaults = append([]string{filepath.Join(l.projectDir, skillsDir)}, defaults...)
		}
		p.SkillDirs = append(defaults, p.SkillDirs...)
	}
	p.SkillDirs = l.absPaths(p.SkillDirs)
	p.ReadPaths = l.absPaths(p.ReadPaths)
	if p.Sandbox.Mode == "" {
		p.Sandbox.Mode = policy.SandboxOn
	}
	if p.Sandbox.Network == "" {
		p.Sandbox.Network = policy.NetworkOn
	}
	if p.PluginDevDir != "" {
		p.PluginDevDir = l.absPaths([]string{p.PluginDevDir})[0]
	}
	if p.Audit.Path != "" {
		p.Audit.Path = l.absPaths([]string{p.Audit.Path})[0]
	}
	p.Sandbox.Read = resolvePaths(l.absPaths(p.Sandbox.Read))
	p.Sandbox.Write = resolvePaths(l.absPaths(p.Sandbox.Write))
	p.Sandbox.UnixSockets = resolvePaths(l.absPaths(p.Sandbox.UnixSockets))
}

// socketPath is a Unix socket's path as the resolved profile names it: ~
// expanded, symlinks resolved (/var/run/docker.sock is /run/docker.sock).
func (l *loader) socketPath(s string) string {
	return policy.ResolvePath(l.absPaths([]string{s})[0])
}

// absPaths expands ~ and makes relative paths relative to the workspace.
func (l *loader) absPaths(paths []string) []string {
	var out []string
	for _, d := range paths {
		switch {
		case d == "~":
			d = l.home
		case strings.HasPrefix(d, "~/"):
			d = filepath.Join(l.home, d[2:])
		case !filepath.IsAbs(d) && l.opts.Workspace != "":
			d = filepath.Join(l.opts.Workspace, d)
		}
		d = filepath.Clean(d)
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// baseLayer finds the profile name among those a project cannot touch: a
// managed profile, a user custom profile, or a built-in, in that order. It
// reports false when none has the name.
func (l *loader) baseLayer(name, chosenBy string) (layer, bool, error) {
	if !validProfileName(name) {
		return layer{}, false, fmt.Errorf("config: %s: invalid profile name %q (want lowercase letters, digits, - and _)", chosenBy, name)
	}
	if path, ok := l.managed.profiles[name]; ok {
		ly, ok, err := l.readProfileFile(path, name)
		ly.who = whoManaged
		return ly, ok, err
	}
	ly, ok, err := l.readProfileFile(filepath.Join(l.userDir, profilesDir, name+".yaml"), name)
	if err != nil || ok {
		ly.who = whoUser
		return ly, ok, err
	}
	if b, err := profiles.Read(name); err == nil {
		ly, err := l.parse(b, "built-in profile "+name, builtinSource+":"+name, profileShape())
		ly.who = whoBuiltin
		return ly, err == nil, err
	}
	return layer{}, false, nil
}

// nameTaken reports whether a managed, user or built-in profile is called
// name: a project profile of that name would shadow it.
func (l *loader) nameTaken(name string) bool {
	if _, ok := l.managed.profiles[name]; ok {
		return true
	}
	if _, err := os.Stat(filepath.Join(l.userDir, profilesDir, name+".yaml")); err == nil {
		return true
	}
	return slices.Contains(profiles.Names(), name)
}

// warnShadowing names each project profile refused for its name.
func (l *loader) warnShadowing() {
	if l.projectDir == "" {
		return
	}
	entries, _ := os.ReadDir(filepath.Join(l.projectDir, profilesDir))
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".yaml")
		if ok && !e.IsDir() && l.nameTaken(name) {
			l.warnings = append(l.warnings, fmt.Sprintf("%s ignored: a project may not define a profile named like a managed, user or built-in one (%s); rename the file",
				l.display(filepath.Join(l.projectDir, profilesDir, e.Name())), name))
		}
	}
}

func (l *loader) unknownProfile(name, chosenBy string) error {
	infos, err := l.names()
	if err != nil {
		return err
	}
	var known []string
	for _, in := range infos {
		known = append(known, in.Name)
	}
	hint := ""
	if c := suggest.Closest(name, known); c != "" {
		hint = fmt.Sprintf("did you mean %q? ", c)
	}
	where := ""
	if chosenBy != "" {
		where = chosenBy + ": "
	}
	return fmt.Errorf("config: %s%w %q (%savailable: %s)", where, ErrUnknownProfile, name, hint, strings.Join(known, ", "))
}

// readProfileFile reads a custom whole profile; its name is its file name.
func (l *loader) readProfileFile(path, name string) (layer, bool, error) {
	ly, ok, err := l.readFile(path, profileShape())
	if err != nil || !ok {
		return ly, ok, err
	}
	if v, set := ly.data[keyName]; set && v != name {
		return layer{}, false, fmt.Errorf("config: %w", &KeyError{Source: ly.label, Key: keyName,
			Problem: fmt.Sprintf("%v does not match the file name; a custom profile is named by its file (%s.yaml)", v, name)})
	}
	return ly, true, nil
}

// readFile reads and checks one YAML file; a missing file is not an error.
func (l *loader) readFile(path string, s *shape) (layer, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return layer{}, false, nil
	}
	label := l.display(path)
	if err != nil {
		return layer{}, false, fmt.Errorf("config: %s: %w", label, err)
	}
	ly, err := l.parse(b, label, path, s)
	return ly, err == nil, err
}

// parse turns YAML into a checked layer.
func (l *loader) parse(b []byte, label, source string, s *shape) (layer, error) {
	var data map[string]any
	if err := yaml.Unmarshal(b, &data); err != nil {
		return layer{}, fmt.Errorf("config: %s: %w", label, err)
	}
	if data == nil {
		data = map[string]any{}
	}
	maps.IntfaceKeysToStrings(data)
	return l.check(layer{label: label, source: source, data: data}, s)
}

// check rejects unknown keys and bad values of one layer and normalizes its
// scalars for decoding.
func (l *loader) check(ly layer, s *shape) (layer, error) {
	expandSandbox(ly.data)
	expandAudit(ly.data)
	if errs := checkKeys(ly.label, ly.data, s); len(errs) > 0 {
		return layer{}, fmt.Errorf("config: %w", errors.Join(errs...))
	}
	normalizeScalars(ly.data, s)
	p, err := decode(withoutKey(ly.data, keyProfile))
	if err != nil {
		return layer{}, fmt.Errorf("config: %s: %w", ly.label, err)
	}
	errs := validate(ly.label, p)
	if d := p.PluginDevDir; d != "" && !filepath.IsAbs(d) && d != "~" && !strings.HasPrefix(d, "~/") && !l.inProject(ly.source) {
		// Relative to the workspace, it would make a folder of every
		// repository opened a source of unpinned plugins. (A project's
		// is refused whatever it says, with a warning: see narrow.)
		errs = append(errs, &KeyError{Source: ly.label, Key: keyPluginDev,
			Problem: fmt.Sprintf("%q is not absolute; give an absolute path or one under ~/", d)})
	}
	if v, ok := ly.data[keyProfile].(string); ok && !validProfileName(v) {
		errs = append(errs, &KeyError{Source: ly.label, Key: keyProfile,
			Problem: fmt.Sprintf("invalid profile name %q (want lowercase letters, digits, - and _)", v)})
	}
	if len(errs) > 0 {
		return layer{}, fmt.Errorf("config: %w", errors.Join(errs...))
	}
	return ly, nil
}

// inProject reports whether source, a layer's file, is in the project's
// .yagent folder.
func (l *loader) inProject(source string) bool {
	return l.projectDir != "" && strings.HasPrefix(source, l.projectDir+string(filepath.Separator))
}

// envLayers returns one layer per YAGENT_* variable set, in a fixed order.
func (l *loader) envLayers() ([]layer, error) {
	var out []layer
	for _, v := range []struct {
		name string
		key  string
		conv func(string) (any, error)
	}{
		{EnvProfile, keyProfile, func(s string) (any, error) { return s, nil }},
		{EnvDeferred, "deferred", func(s string) (any, error) { return strings.ToLower(s), nil }},
		{EnvSchemaBudgetBytes, "schema_budget_bytes", func(s string) (any, error) {
			n, err := strconv.Atoi(s)
			if err != nil {
				return nil, fmt.Errorf("want a whole number of bytes, got %q", s)
			}
			return n, nil
		}},
		{EnvFamilies, "families", func(s string) (any, error) {
			var list []any
			for f := range strings.SplitSeq(s, ",") {
				if f = strings.TrimSpace(f); f != "" {
					list = append(list, f)
				}
			}
			return list, nil
		}},
	} {
		raw, ok := l.opts.Env(v.name)
		if raw = strings.TrimSpace(raw); !ok || raw == "" {
			continue
		}
		label := "$" + v.name
		val, err := v.conv(raw)
		if err != nil {
			return nil, fmt.Errorf("config: %w", &KeyError{Source: label, Key: v.key, Problem: err.Error()})
		}
		ly, err := l.check(layer{label: label, source: "env:" + v.name, who: whoEnv, data: map[string]any{v.key: val}}, configShape())
		if err != nil {
			return nil, err
		}
		out = append(out, ly)
	}
	return out, nil
}

// flagLayer turns Overrides (flat koanf keys, Go values) into a layer.
func (l *loader) flagLayer() (layer, error) {
	// A JSON round trip gives the values the shapes YAML gives.
	b, err := json.Marshal(l.opts.Overrides)
	if err != nil {
		return layer{}, fmt.Errorf("config: flags: %w", err)
	}
	var flat map[string]any
	if err := json.Unmarshal(b, &flat); err != nil {
		return layer{}, fmt.Errorf("config: flags: %w", err)
	}
	return l.check(layer{label: "flags", source: "flags", who: whoFlags, data: maps.Unflatten(flat, ".")}, configShape())
}

// display shows path with the home folder as ~.
func (l *loader) display(path string) string {
	if rel, err := filepath.Rel(l.home, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.Join("~", rel)
	}
	return path
}

// Names lists the profiles that can be selected, sorted by name: the
// built-ins, the user's custom profiles, the managed ones and the
// project's; where names collide, the one Load would use (managed > user >
// built-in; a project profile never replaces another).
func Names(opts LoadOptions) ([]ProfileInfo, error) {
	l, err := newLoader(opts)
	if err != nil {
		return nil, err
	}
	if l.managed, err = l.readManaged(); err != nil {
		return nil, err
	}
	return l.names()
}

func (l *loader) names() ([]ProfileInfo, error) {
	byName := map[string]ProfileInfo{}
	for _, name := range profiles.Names() {
		b, err := profiles.Read(name)
		if err != nil {
			return nil, err
		}
		var head struct {
			Description string `yaml:"description"`
		}
		if err := yaml.Unmarshal(b, &head); err != nil {
			return nil, fmt.Errorf("config: built-in profile %s: %w", name, err)
		}
		byName[name] = ProfileInfo{Name: name, Description: head.Description, Source: builtinSource}
	}
	add := func(name, path string) error {
		ly, _, err := l.readProfileFile(path, name)
		if err != nil {
			return err
		}
		desc, _ := ly.data[keyDescription].(string)
		byName[name] = ProfileInfo{Name: name, Description: desc, Source: path}
		return nil
	}
	for _, dir := range []string{l.userDir, l.projectDir} {
		if dir == "" {
			continue
		}
		entries, err := os.ReadDir(filepath.Join(dir, profilesDir))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("config: %s: %w", l.display(filepath.Join(dir, profilesDir)), err)
		}
		for _, e := range entries {
			name, ok := strings.CutSuffix(e.Name(), ".yaml")
			if !ok || e.IsDir() {
				continue
			}
			path := filepath.Join(dir, profilesDir, e.Name())
			if !validProfileName(name) {
				return nil, fmt.Errorf("config: %s: invalid profile file name (want lowercase letters, digits, - and _, then .yaml)", l.display(path))
			}
			if dir == l.projectDir && l.nameTaken(name) {
				continue
			}
			if err := add(name, path); err != nil {
				return nil, err
			}
		}
	}
	for _, name := range sortedKeys(l.managed.profiles) {
		if err := add(name, l.managed.profiles[name]); err != nil {
			return nil, err
		}
	}
	out := make([]ProfileInfo, 0, len(byName))
	for _, name := range sortedKeys(byName) {
		out = append(out, byName[name])
	}
	return out, nil
}

// Show returns the YAML of the resolved profile, headed by comments naming
// its layers and the layers each key's value came from.
func (ld *Loaded) Show() ([]byte, error) {
	body, err := yaml.Marshal(ld.Profile)
	if err != nil {
		return nil, fmt.Errorf("config: show %s: %w", ld.Profile.Name, err)
	}
	var b strings.Builder
	b.WriteString("# resolved from: " + strings.Join(ld.Layers, " < ") + "\n")
	b.WriteString("# where each key's value comes from:\n")
	for _, key := range sortedKeys(ld.Origins) {
		fmt.Fprintf(&b, "#   %s: %s\n", key, strings.Join(ld.Origins[key], " < "))
	}
	return append([]byte(b.String()), body...), nil
}

// decode turns checked, merged keys into a Profile.
func decode(data map[string]any) (*Profile, error) {
	p := &Profile{}
	d, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		TagName:     "koanf",
		ErrorUnused: true,
		Result:      p,
	})
	if err != nil {
		return nil, err
	}
	if err := d.Decode(data); err != nil {
		return nil, err
	}
	return p, nil
}

// normalizeScalars converts whole numbers to int and plugin setting values
// to strings, in place, so decoding needs no weak typing.
func normalizeScalars(data map[string]any, s *shape) {
	for k, v := range data {
		f := s.fields[k]
		if f == nil || v == nil {
			continue
		}
		switch f.kind {
		case kindInt:
			data[k], _ = asInt(v)
		case kindStringMap:
			stringifyValues(v.(map[string]any))
		case kindStringMaps:
			for _, m := range v.(map[string]any) {
				if m != nil {
					stringifyValues(m.(map[string]any))
				}
			}
		case kindStruct:
			normalizeScalars(v.(map[string]any), f)
		case kindStructSlice:
			for _, e := range v.([]any) {
				normalizeScalars(e.(map[string]any), f)
			}
		}
	}
}

func stringifyValues(m map[string]any) {
	for k, v := range m {
		if v != nil {
			if _, ok := v.(string); !ok {
				m[k] = fmt.Sprint(v)
			}
		}
	}
}

func withoutKey(m map[string]any, key string) map[string]any {
	if _, ok := m[key]; !ok {
		return m
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}
