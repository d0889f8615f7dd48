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

	"github.com/yagent/yagent/host/toolspec"
	"github.com/yagent/yagent/profiles"
)

// LoadOptions says where to look and what the caller sets on top.
type LoadOptions struct {
	// Profile is the base profile named by --profile; "" lets the
	// environment, the config files or the default ("coder") decide.
	Profile string
	// Workspace is the absolute path of the workspace; its .yagent folder
	// holds the project layer. "" means no project layer.
	Workspace string
	// Home is the user's home folder; "" means os.UserHomeDir().
	Home string
	// Env looks up environment variables; nil means os.LookupEnv.
	Env func(string) (string, bool)
	// Overrides are flag values by koanf key ("deferred",
	// "schema_budget_bytes", "network.allow", ...); they win over every file.
	Overrides map[string]any
	// TrustProject lets the project layer (the workspace's .yagent folder)
	// widen what runs without asking. A repository is someone else's text:
	// untrusted, its files may narrow the profile but their read_paths,
	// skill_dirs, network.allow, exec allow rules and plugin settings (which
	// name programs to run) are dropped, each named in Loaded.Warnings.
	TrustProject bool
}

// Loaded is a resolved profile and where it came from.
type Loaded struct {
	Profile *Profile
	// Sources lists the layers used, lowest first: "builtin:NAME" for an
	// embedded profile, the absolute path of each file read, "env:VAR" for
	// each YAGENT_* variable applied, and "flags" when overrides were given.
	Sources []string
	// Warnings name what an untrusted project layer tried to widen and was
	// dropped.
	Warnings []string
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
	data   map[string]any
}

// loader holds what one Load, Names or Show call resolved from its options.
type loader struct {
	opts       LoadOptions
	home       string
	userDir    string
	projectDir string // "" when there is no project layer
	warnings   []string
}

func newLoader(opts LoadOptions) (*loader, error) {
	l := &loader{opts: opts, home: opts.Home}
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
	var top []layer // everything above the base profile, lowest first
	for _, dir := range []string{l.userDir, l.projectDir} {
		if dir == "" {
			continue
		}
		ly, ok, err := l.readFile(filepath.Join(dir, configFileName), configShape())
		if err != nil {
			return nil, err
		}
		if ok {
			if dir == l.projectDir {
				ly = l.untrusted(ly)
			}
			top = append(top, ly)
		}
	}
	envLayers, err := l.envLayers()
	if err != nil {
		return nil, err
	}
	top = append(top, envLayers...)
	if len(l.opts.Overrides) > 0 {
		ly, err := l.flagLayer()
		if err != nil {
			return nil, err
		}
		top = append(top, ly)
	}

	// The highest layer naming a profile chooses the base.
	name, chosenBy := profiles.Default, ""
	for _, ly := range top {
		if v, ok := ly.data[keyProfile].(string); ok && v != "" {
			name, chosenBy = v, ly.label
		}
	}
	if l.opts.Profile != "" {
		name, chosenBy = l.opts.Profile, "--profile"
	}
	base, err := l.baseLayer(name, chosenBy)
	if err != nil {
		return nil, err
	}

	if l.projectDir != "" && strings.HasPrefix(base.source, l.projectDir+string(filepath.Separator)) {
		base = l.untrusted(base)
	}

	k := koanf.New(".")
	out := &Loaded{}
	for _, ly := range append([]layer{base}, top...) {
		data := maps.Copy(ly.data)
		delete(data, keyProfile)
		if err := k.Load(confmap.Provider(data, ""), nil); err != nil {
			return nil, fmt.Errorf("config: %s: %w", ly.label, err)
		}
		out.Sources = append(out.Sources, ly.source)
	}
	p, err := decode(k.Raw())
	if err != nil {
		return nil, fmt.Errorf("config: merged profile: %w", err)
	}
	if err := errors.Join(validate("merged profile", p)...); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	p.Name = name
	_, skillDirsSet := k.Raw()[keySkillDirs]
	l.normalize(p, skillDirsSet)
	out.Profile = p
	out.Warnings = l.warnings
	return out, nil
}

// untrusted drops from a project layer what would widen the profile when
// the project is not trusted: paths to read, hosts to reach, exec allow
// rules, and plugin settings (which name programs the plugins run).
func (l *loader) untrusted(ly layer) layer {
	if l.opts.TrustProject {
		return ly
	}
	data := maps.Copy(ly.data)
	var dropped []string
	for _, key := range []string{keyReadPaths, keySkillDirs, keyPlugins} {
		if _, ok := data[key]; ok {
			delete(data, key)
			dropped = append(dropped, key)
		}
	}
	if nw, ok := data[keyNetwork].(map[string]any); ok {
		if _, ok := nw["allow"]; ok {
			delete(nw, "allow")
			dropped = append(dropped, keyNetwork+".allow")
		}
	}
	if ex, ok := data[keyExec].(map[string]any); ok {
		if rules, ok := ex["rules"].([]any); ok {
			kept := rules[:0:0]
			for _, r := range rules {
				if m, ok := r.(map[string]any); ok && m["action"] == ExecAllow {
					continue
				}
				kept = append(kept, r)
			}
			if len(kept) != len(rules) {
				ex["rules"] = kept
				dropped = append(dropped, fmt.Sprintf("%d exec allow rule(s)", len(rules)-len(kept)))
			}
		}
	}
	if len(dropped) > 0 {
		l.warnings = append(l.warnings, fmt.Sprintf("%s: %s ignored: the project is not trusted to widen what runs without asking "+
			"(approve one of its calls for the whole project, or add it to authorized_projects in ~/.yagent/settings.json)",
			ly.label, strings.Join(dropped, ", ")))
	}
	ly.data = data
	return ly
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
		p.SkillDirs = []string{filepath.Join(l.userDir, skillsDir)}
		if l.projectDir != "" {
			p.SkillDirs = append([]string{filepath.Join(l.projectDir, skillsDir)}, p.SkillDirs...)
		}
	}
	p.SkillDirs = l.absPaths(p.SkillDirs)
	p.ReadPaths = l.absPaths(p.ReadPaths)
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

// baseLayer finds the profile name: a project custom profile, a user custom
// profile, or a built-in, in that order.
func (l *loader) baseLayer(name, chosenBy string) (layer, error) {
	if !validProfileName(name) {
		return layer{}, fmt.Errorf("config: %s: invalid profile name %q (want lowercase letters, digits, - and _)", chosenBy, name)
	}
	for _, dir := range []string{l.projectDir, l.userDir} {
		if dir == "" {
			continue
		}
		ly, ok, err := l.readProfileFile(filepath.Join(dir, profilesDir, name+".yaml"), name)
		if err != nil {
			return layer{}, err
		}
		if ok {
			return ly, nil
		}
	}
	if b, err := profiles.Read(name); err == nil {
		ly, err := l.parse(b, "built-in profile "+name, builtinSource+":"+name, profileShape())
		if err != nil {
			return layer{}, err
		}
		return ly, nil
	}
	infos, err := l.names()
	if err != nil {
		return layer{}, err
	}
	var known []string
	for _, in := range infos {
		known = append(known, in.Name)
	}
	hint := ""
	if c := closest(name, known); c != "" {
		hint = fmt.Sprintf("did you mean %q? ", c)
	}
	where := ""
	if chosenBy != "" {
		where = chosenBy + ": "
	}
	return layer{}, fmt.Errorf("config: %s%w %q (%savailable: %s)", where, ErrUnknownProfile, name, hint, strings.Join(known, ", "))
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
	if errs := checkKeys(ly.label, ly.data, s); len(errs) > 0 {
		return layer{}, fmt.Errorf("config: %w", errors.Join(errs...))
	}
	normalizeScalars(ly.data, s)
	p, err := decode(withoutKey(ly.data, keyProfile))
	if err != nil {
		return layer{}, fmt.Errorf("config: %s: %w", ly.label, err)
	}
	errs := validate(ly.label, p)
	if v, ok := ly.data[keyProfile].(string); ok && !validProfileName(v) {
		errs = append(errs, &KeyError{Source: ly.label, Key: keyProfile,
			Problem: fmt.Sprintf("invalid profile name %q (want lowercase letters, digits, - and _)", v)})
	}
	if len(errs) > 0 {
		return layer{}, fmt.Errorf("config: %w", errors.Join(errs...))
	}
	return ly, nil
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
		ly, err := l.check(layer{label: label, source: "env:" + v.name, data: map[string]any{v.key: val}}, configShape())
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
	return l.check(layer{label: "flags", source: "flags", data: maps.Unflatten(flat, ".")}, configShape())
}

// display shows path with the home folder as ~.
func (l *loader) display(path string) string {
	if rel, err := filepath.Rel(l.home, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.Join("~", rel)
	}
	return path
}

// Names lists the profiles that can be selected, sorted by name: the
// built-ins, the user's custom profiles and the project's; where names
// collide, the one Load would use (project > user > built-in).
func Names(opts LoadOptions) ([]ProfileInfo, error) {
	l, err := newLoader(opts)
	if err != nil {
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
	for _, dir := range []string{l.userDir, l.projectDir} { // project last: it wins
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
			ly, _, err := l.readProfileFile(path, name)
			if err != nil {
				return nil, err
			}
			desc, _ := ly.data[keyDescription].(string)
			byName[name] = ProfileInfo{Name: name, Description: desc, Source: path}
		}
	}
	out := make([]ProfileInfo, 0, len(byName))
	for _, name := range sortedKeys(byName) {
		out = append(out, byName[name])
	}
	return out, nil
}

// Show returns the YAML of the resolved profile name ("" = the one Load
// would select), headed by a comment naming its layers.
func Show(opts LoadOptions, name string) ([]byte, error) {
	if name != "" {
		opts.Profile = name
	}
	ld, err := Load(opts)
	if err != nil {
		return nil, err
	}
	body, err := yaml.Marshal(ld.Profile)
	if err != nil {
		return nil, fmt.Errorf("config: show %s: %w", ld.Profile.Name, err)
	}
	head := "# resolved from: " + strings.Join(ld.Sources, " < ") + "\n"
	return append([]byte(head), body...), nil
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
