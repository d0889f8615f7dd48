package config_test

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/host/config"
	"github.com/yagent/yagent/profiles"
	"github.com/yagent/yagent/sdk"
)

// env is a fake environment.
type env map[string]string

func (e env) lookup(k string) (string, bool) {
	v, ok := e[k]
	return v, ok
}

// fixture is a home and a workspace with the given files, by path relative
// to "home/" or "ws/".
type fixture struct {
	home, ws string
}

func newFixture(t *testing.T, files map[string]string) fixture {
	t.Helper()
	root := t.TempDir()
	f := fixture{home: filepath.Join(root, "home"), ws: filepath.Join(root, "ws")}
	for _, d := range []string{f.home, f.ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// managed is the fixture's managed layer folder, root/managed.
func (f fixture) managed() string { return filepath.Join(filepath.Dir(f.home), "managed") }

func (f fixture) opts(e env, overrides map[string]any) config.LoadOptions {
	if e == nil {
		e = env{}
	}
	return config.LoadOptions{Workspace: f.ws, Home: f.home, Env: e.lookup, Overrides: overrides, ManagedDir: f.managed(), ManagedOwner: os.Getuid()}
}

const (
	userConfig    = "home/.yagent/config.yaml"
	projectConfig = "ws/.yagent/config.yaml"
)

func TestLoad_BuiltIns(t *testing.T) {
	t.Parallel()
	for _, name := range profiles.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			opts := f.opts(nil, nil)
			opts.Profile = name
			ld, err := config.Load(opts)
			if err != nil {
				t.Fatalf("Load(%s): %v", name, err)
			}
			p := ld.Profile
			if p.Name != name || p.Description == "" {
				t.Fatalf("Load(%s): name %q, description %q", name, p.Name, p.Description)
			}
			if want := []string{"builtin:" + name}; !slices.Equal(ld.Sources, want) {
				t.Fatalf("Load(%s).Sources = %q, want %q", name, ld.Sources, want)
			}
			// coder and full list their Hot and Warm tools alone; every
			// tool of theirs would fit the budget, which auto would list.
			want := config.DeferredAuto
			if name == "coder" || name == "full" {
				want = config.DeferredOn
			}
			if p.Deferred != want || p.SchemaBudgetBytes != config.DefaultSchemaBudgetBytes {
				t.Fatalf("Load(%s): deferred %q budget %d, want %q and the default budget", name, p.Deferred, p.SchemaBudgetBytes, want)
			}
		})
	}
}

func TestLoad_BuiltInFamilies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		profile string
		want    []string
	}{
		{"", []string{"cognitive", "fs", "search", "shell"}},
		{"coder", []string{"cognitive", "fs", "search", "shell"}},
		{"readonly", []string{"cognitive", "fs", "search"}},
		{"browser", []string{"browser", "cognitive", "fs", "search"}},
		{"full", toolspec.Families()},
	}
	for _, tt := range tests {
		t.Run(tt.profile, func(t *testing.T) {
			t.Parallel()
			opts := newFixture(t, nil).opts(nil, nil)
			opts.Profile = tt.profile
			ld, err := config.Load(opts)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ld.Profile.Families, tt.want) {
				t.Fatalf("Load(%q).Families = %q, want %q", tt.profile, ld.Profile.Families, tt.want)
			}
		})
	}
}

// denied reports whether a Deny glob of p matches tool.
func denied(p *config.Profile, tool string) bool {
	for _, g := range p.Deny {
		if ok, _ := path.Match(g, tool); ok {
			return true
		}
	}
	return false
}

// readonly must change nothing, whatever family a config adds to it.
func TestReadonly_DeniesEveryChangingTool(t *testing.T) {
	t.Parallel()
	opts := newFixture(t, nil).opts(env{config.EnvFamilies: strings.Join(toolspec.Families(), ",")}, nil)
	opts.Profile = "readonly"
	ld, err := config.Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range toolspec.All() {
		if s.Family == toolspec.FamilyHost || s.Family == toolspec.FamilyBrowser {
			continue // host tools are flow; browser is not in readonly's reach by design
		}
		changes := s.Effect == sdk.EffectWrite || s.Effect == sdk.EffectExec || s.Effect == sdk.EffectNetwork
		if changes && !denied(ld.Profile, s.Name) {
			t.Errorf("readonly does not deny %s (effect %s)", s.Name, s.Effect)
		}
		if !changes && s.ReadOnly && s.Family != toolspec.FamilyShell && denied(ld.Profile, s.Name) {
			t.Errorf("readonly denies read-only tool %s", s.Name)
		}
	}
}

func TestLoad_Precedence(t *testing.T) {
	t.Parallel()
	custom := map[string]string{"home/.yagent/profiles/base.yaml": "description: custom base\ndeferred: off\nschema_budget_bytes: 100\n"}
	tests := []struct {
		name       string
		files      map[string]string
		env        env
		flags      map[string]any
		wantDefer  string
		wantBudget int
		wantSrcs   []string
	}{
		{"base only", nil, nil, nil, "off", 100, []string{"base.yaml"}},
		{"user over base",
			map[string]string{userConfig: "profile: base\ndeferred: on\n"},
			nil, nil, "on", 100, []string{"base.yaml", "home/.yagent/config.yaml"}},
		{"project over user",
			map[string]string{userConfig: "profile: base\ndeferred: on\nschema_budget_bytes: 200\n", projectConfig: "deferred: auto\n"},
			nil, nil, "auto", 200, []string{"base.yaml", "home/.yagent/config.yaml", "ws/.yagent/config.yaml"}},
		{"env over project",
			map[string]string{userConfig: "profile: base\n", projectConfig: "deferred: auto\nschema_budget_bytes: 300\n"},
			env{config.EnvDeferred: "on"}, nil, "on", 300,
			[]string{"base.yaml", "home/.yagent/config.yaml", "ws/.yagent/config.yaml", "env:YAGENT_DEFERRED"}},
		{"flags over env",
			map[string]string{userConfig: "profile: base\n", projectConfig: "deferred: auto\n"},
			env{config.EnvDeferred: "on", config.EnvSchemaBudgetBytes: "400"},
			map[string]any{"deferred": "off"}, "off", 400,
			[]string{"base.yaml", "home/.yagent/config.yaml", "ws/.yagent/config.yaml", "env:YAGENT_DEFERRED", "env:YAGENT_SCHEMA_BUDGET_BYTES", "flags"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{}
			for k, v := range custom {
				files[k] = v
			}
			for k, v := range tt.files {
				files[k] = v
			}
			f := newFixture(t, files)
			opts := f.opts(tt.env, tt.flags)
			if len(tt.files) == 0 {
				opts.Profile = "base"
			}
			ld, err := config.Load(opts)
			if err != nil {
				t.Fatal(err)
			}
			if ld.Profile.Deferred != tt.wantDefer || ld.Profile.SchemaBudgetBytes != tt.wantBudget {
				t.Errorf("deferred %q budget %d, want %q %d", ld.Profile.Deferred, ld.Profile.SchemaBudgetBytes, tt.wantDefer, tt.wantBudget)
			}
			if ld.Profile.Name != "base" || ld.Profile.Description != "custom base" {
				t.Errorf("profile %q (%q), want the custom base", ld.Profile.Name, ld.Profile.Description)
			}
			if len(ld.Sources) != len(tt.wantSrcs) {
				t.Fatalf("Sources = %q, want %d entries ending %q", ld.Sources, len(tt.wantSrcs), tt.wantSrcs)
			}
			for i, s := range ld.Sources {
				if !strings.HasSuffix(filepath.ToSlash(s), tt.wantSrcs[i]) {
					t.Errorf("Sources[%d] = %q, want it to end %q", i, s, tt.wantSrcs[i])
				}
			}
		})
	}
}

func TestLoad_ProfileSelection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		env   env
		flag  string
		want  string
	}{
		{"default", nil, nil, "", "coder"},
		{"user config", map[string]string{userConfig: "profile: readonly\n"}, nil, "", "readonly"},
		{"project cannot switch the user's profile", map[string]string{userConfig: "profile: readonly\n", projectConfig: "profile: browser\n"}, nil, "", "readonly"},
		{"project profile narrows the default", map[string]string{projectConfig: "profile: proj\n", "ws/.yagent/profiles/proj.yaml": "description: project's\n"}, nil, "", "coder"},
		{"flag names a project profile", map[string]string{"ws/.yagent/profiles/proj.yaml": "description: project's\n"}, nil, "proj", "proj"},
		{"env over project", map[string]string{projectConfig: "profile: browser\n"}, env{config.EnvProfile: "full"}, "", "full"},
		{"flag over env", map[string]string{projectConfig: "profile: browser\n"}, env{config.EnvProfile: "full"}, "readonly", "readonly"},
		{"project custom cannot shadow user custom", map[string]string{
			userConfig:                        "profile: mine\n",
			"home/.yagent/profiles/mine.yaml": "description: user's\n",
			"ws/.yagent/profiles/mine.yaml":   "description: project's\n",
		}, nil, "", "mine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := newFixture(t, tt.files).opts(tt.env, nil)
			opts.Profile = tt.flag
			ld, err := config.Load(opts)
			if err != nil {
				t.Fatal(err)
			}
			if ld.Profile.Name != tt.want {
				t.Fatalf("profile %q, want %q", ld.Profile.Name, tt.want)
			}
			if tt.want == "mine" && ld.Profile.Description != "user's" {
				t.Fatalf("description %q, want the user's custom profile", ld.Profile.Description)
			}
		})
	}
}

func TestLoad_ListsReplaceMapsMerge(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{
		"home/.yagent/profiles/mine.yaml": "deny: [browser_evaluate, run_bash]\ntiers: {browser_navigate: warm}\nplugins: {search: {rg_path: /opt/rg, max: 5}}\n",
		userConfig:                        "profile: mine\ndeny: [browser_evaluate]\ntiers: {grep: cold}\nplugins: {search: {max: 7}, browser: {headless: true}}\n",
	})
	ld, err := config.Load(f.opts(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	p := ld.Profile
	if want := []string{"browser_evaluate"}; !slices.Equal(p.Deny, want) {
		t.Errorf("Deny = %q, want %q (lists replace)", p.Deny, want)
	}
	if p.Tiers["grep"] != "cold" || p.Tiers["browser_navigate"] != "warm" {
		t.Errorf("Tiers = %v, want the built-in's and the config's (maps merge)", p.Tiers)
	}
	want := map[string]map[string]string{
		"search":  {"rg_path": "/opt/rg", "max": "7"},
		"browser": {"headless": "true"},
	}
	for fam, kv := range want {
		for k, v := range kv {
			if got := p.Plugins[fam][k]; got != v {
				t.Errorf("Plugins[%s][%s] = %q, want %q", fam, k, got, v)
			}
		}
	}
}

func TestLoad_EnvOverrides(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		env   env
		check func(*config.Profile) bool
	}{
		{"profile", env{config.EnvProfile: "readonly"}, func(p *config.Profile) bool { return p.Name == "readonly" }},
		{"deferred", env{config.EnvDeferred: "OFF"}, func(p *config.Profile) bool { return p.Deferred == config.DeferredOff }},
		{"budget", env{config.EnvSchemaBudgetBytes: "4096"}, func(p *config.Profile) bool { return p.SchemaBudgetBytes == 4096 }},
		{"families", env{config.EnvFamilies: " shell, fs ,"}, func(p *config.Profile) bool {
			return slices.Equal(p.Families, []string{"fs", "shell"})
		}},
		{"empty counts as unset", env{config.EnvDeferred: "", config.EnvFamilies: ""}, func(p *config.Profile) bool {
			return p.Deferred == config.DeferredOn && len(p.Families) == 4
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, map[string]string{projectConfig: "deferred: on\nschema_budget_bytes: 1000\n"})
			ld, err := config.Load(f.opts(tt.env, nil))
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(ld.Profile) {
				t.Fatalf("env %v not applied: %+v", tt.env, ld.Profile)
			}
		})
	}
}

func TestLoad_UnknownKeyNamesFileAndKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		flags map[string]any
		want  string
	}{
		{"user config typo", map[string]string{userConfig: "deferd: on\n"}, nil,
			`~/.yagent/config.yaml: unknown key "deferd" (did you mean "deferred"?)`},
		{"project config nested", map[string]string{projectConfig: "network:\n  alow: [example.com]\n"}, nil,
			`ws/.yagent/config.yaml: unknown key "network.alow" (did you mean "network.allow"?)`},
		{"list item", map[string]string{userConfig: "exec:\n  rules:\n    - acton: deny\n      program: rm\n"}, nil,
			`~/.yagent/config.yaml: unknown key "exec.rules[0].acton" (did you mean "exec.rules[0].action"?)`},
		{"nothing close", map[string]string{userConfig: "colour: blue\n"}, nil,
			`~/.yagent/config.yaml: unknown key "colour" (valid keys: `},
		{"name in config", map[string]string{userConfig: "name: mine\n"}, nil,
			`~/.yagent/config.yaml: unknown key "name"`},
		{"custom profile", map[string]string{userConfig: "profile: mine\n", "home/.yagent/profiles/mine.yaml": "famlies: [fs]\n"}, nil,
			`~/.yagent/profiles/mine.yaml: unknown key "famlies" (did you mean "families"?)`},
		{"flag", nil, map[string]any{"schema_budget": 10}, `flags: unknown key "schema_budget"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := config.Load(newFixture(t, tt.files).opts(nil, tt.flags))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load: got %v, want an error containing %q", err, tt.want)
			}
			var ke *config.KeyError
			if !errors.As(err, &ke) || !ke.Unknown {
				t.Fatalf("Load: %v is not an unknown-key *KeyError", err)
			}
		})
	}
}

func TestLoad_InvalidValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		env   env
		flags map[string]any
		want  string
	}{
		{"deferred", map[string]string{userConfig: "deferred: sometimes\n"}, nil, nil,
			`~/.yagent/config.yaml: key "deferred": invalid value "sometimes" (want auto, on or off)`},
		{"family", map[string]string{projectConfig: "families: [fs, mail]\n"}, nil, nil,
			`ws/.yagent/config.yaml: key "families[1]": unknown family "mail"`},
		{"tier word", map[string]string{userConfig: "tiers: {grep: lukewarm}\n"}, nil, nil,
			`key "tiers.grep": invalid tier "lukewarm"`},
		{"tier of an unknown tool", map[string]string{userConfig: "tiers: {gerp: warm}\n"}, nil, nil,
			`key "tiers.gerp": "gerp" is not a static tool`},
		{"host tool demoted", map[string]string{userConfig: "tiers: {load_tool: cold}\n"}, nil, nil,
			`key "tiers.load_tool": load_tool is a host tool and always hot`},
		{"exec action", map[string]string{userConfig: "exec: {rules: [{action: maybe, program: rm}]}\n"}, nil, nil,
			`key "exec.rules[0].action": invalid action "maybe" (want allow, ask or deny)`},
		{"exec program path", map[string]string{userConfig: "exec: {rules: [{action: deny, program: /bin/rm}]}\n"}, nil, nil,
			`key "exec.rules[0].program": invalid program "/bin/rm"`},
		{"budget type", map[string]string{userConfig: "schema_budget_bytes: lots\n"}, nil, nil,
			`key "schema_budget_bytes": want a whole number, got the string "lots"`},
		{"budget negative", map[string]string{userConfig: "schema_budget_bytes: -5\n"}, nil, nil,
			`key "schema_budget_bytes": invalid value -5`},
		{"families type", map[string]string{userConfig: "families: fs\n"}, nil, nil,
			`key "families": want a list of strings, got the string "fs"`},
		{"network url", map[string]string{userConfig: "network: {allow: [\"https://example.com\"]}\n"}, nil, nil,
			`key "network.allow[0]": invalid entry: "https://example.com" has a scheme`},
		{"network deny path", map[string]string{userConfig: "network: {deny: [example.com/x]}\n"}, nil, nil,
			`key "network.deny[0]": invalid entry: "example.com/x" has a path`},
		{"network unlisted", map[string]string{userConfig: "network: {unlisted: maybe}\n"}, nil, nil,
			`key "network.unlisted": invalid value "maybe" (want ask or deny)`},
		{"custom profile name mismatch", map[string]string{userConfig: "profile: mine\n", "home/.yagent/profiles/mine.yaml": "name: yours\n"}, nil, nil,
			`~/.yagent/profiles/mine.yaml: key "name": yours does not match the file name`},
		{"env deferred", nil, env{config.EnvDeferred: "maybe"}, nil,
			`$YAGENT_DEFERRED: key "deferred": invalid value "maybe"`},
		{"env budget", nil, env{config.EnvSchemaBudgetBytes: "24k"}, nil,
			`$YAGENT_SCHEMA_BUDGET_BYTES: key "schema_budget_bytes": want a whole number of bytes, got "24k"`},
		{"env family", nil, env{config.EnvFamilies: "fs,mail"}, nil,
			`$YAGENT_FAMILIES: key "families[1]": unknown family "mail"`},
		{"flag deferred", nil, nil, map[string]any{"deferred": "sideways"},
			`flags: key "deferred": invalid value "sideways"`},
		{"flag nested exec", nil, nil, map[string]any{"exec.rules": []map[string]any{{"action": "nope", "program": "rm"}}},
			`flags: key "exec.rules[0].action": invalid action "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := config.Load(newFixture(t, tt.files).opts(tt.env, tt.flags))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load: got %v, want an error containing %q", err, tt.want)
			}
			var ke *config.KeyError
			if !errors.As(err, &ke) {
				t.Fatalf("Load: %v is not a *KeyError", err)
			}
		})
	}
}

func TestLoad_UnknownProfile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		env   env
		flag  string
		want  string
	}{
		{"flag", map[string]string{"home/.yagent/profiles/mine.yaml": ""}, nil, "codr",
			`--profile: unknown profile "codr" (did you mean "coder"? available: browser, coder, full, mine, readonly)`},
		{"env", nil, env{config.EnvProfile: "nope"}, "", `$YAGENT_PROFILE: unknown profile "nope"`},
		{"config", map[string]string{projectConfig: "profile: ghost\n"}, nil, "", `ws/.yagent/config.yaml: unknown profile "ghost"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := newFixture(t, tt.files).opts(tt.env, nil)
			opts.Profile = tt.flag
			_, err := config.Load(opts)
			if !errors.Is(err, config.ErrUnknownProfile) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load: got %v, want ErrUnknownProfile containing %q", err, tt.want)
			}
		})
	}
}

func TestLoad_Paths(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ld, err := config.Load(f.opts(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(f.ws, ".yagent", "skills"), filepath.Join(f.home, ".yagent", "skills")}
	if !slices.Equal(ld.Profile.SkillDirs, want) {
		t.Errorf("default SkillDirs = %q, want %q", ld.Profile.SkillDirs, want)
	}

	f = newFixture(t, map[string]string{userConfig: "skill_dirs: [~/my-skills, docs/skills]\nread_paths: [\"~\", /srv/data/]\n"})
	ld, err = config.Load(f.opts(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	want = []string{filepath.Join(f.home, "my-skills"), filepath.Join(f.ws, "docs", "skills")}
	if !slices.Equal(ld.Profile.SkillDirs, want) {
		t.Errorf("SkillDirs = %q, want %q", ld.Profile.SkillDirs, want)
	}
	if want := []string{f.home, "/srv/data"}; !slices.Equal(ld.Profile.ReadPaths, want) {
		t.Errorf("ReadPaths = %q, want %q", ld.Profile.ReadPaths, want)
	}
}

func TestLoad_WorkspaceAtHomeReadsConfigOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{userConfig: "deferred: on\n"})
	opts := f.opts(nil, nil)
	opts.Workspace = f.home
	ld, err := config.Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(ld.Sources) != 2 {
		t.Fatalf("Sources = %q, want the built-in and one config.yaml", ld.Sources)
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{
		"home/.yagent/profiles/mine.yaml":  "description: user's\n",
		"home/.yagent/profiles/coder.yaml": "description: my coder\n",
		"ws/.yagent/profiles/mine.yaml":    "description: project's\n",
		"ws/.yagent/profiles/proj.yaml":    "description: project's own\n",
		"ws/.yagent/profiles/notes.txt":    "not a profile",
	})
	infos, err := config.Names(f.opts(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]config.ProfileInfo{}
	var names []string
	for _, in := range infos {
		got[in.Name] = in
		names = append(names, in.Name)
	}
	if want := []string{"browser", "coder", "full", "mine", "proj", "readonly"}; !slices.Equal(names, want) {
		t.Fatalf("names %q, want %q", names, want)
	}
	if in := got["mine"]; in.Description != "user's" || in.Source != filepath.Join(f.home, ".yagent", "profiles", "mine.yaml") {
		t.Errorf("mine = %+v, want the user's: a project profile never shadows one", in)
	}
	if in := got["proj"]; in.Description != "project's own" {
		t.Errorf("proj = %+v, want the project's", in)
	}
	if in := got["coder"]; in.Description != "my coder" || !strings.HasSuffix(in.Source, "coder.yaml") {
		t.Errorf("coder = %+v, want the user's override", in)
	}
	if in := got["full"]; in.Source != "builtin" || in.Description == "" {
		t.Errorf("full = %+v, want the built-in with its description", in)
	}
}

func TestShow(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{userConfig: "network: {allow: [example.com]}\n"})
	b, err := config.Show(f.opts(nil, nil), "readonly")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "# resolved from: builtin:readonly < ") {
		t.Errorf("Show: no sources comment:\n%s", b)
	}
	var p config.Profile
	if err := yaml.Unmarshal(b, &p); err != nil {
		t.Fatalf("Show output does not parse: %v\n%s", err, b)
	}
	if p.Name != "readonly" || !slices.Contains(p.Deny, "run_bash") || !slices.Equal(p.Network.Allow, []string{"example.com"}) {
		t.Errorf("Show: got %+v", p)
	}
	// What Show prints loads again as a custom profile and resolves the same.
	g := newFixture(t, map[string]string{"home/.yagent/profiles/readonly.yaml": string(b)})
	again, err := config.Show(g.opts(nil, nil), "readonly")
	if err != nil {
		t.Fatalf("Show output does not load as a profile: %v", err)
	}
	if body, want := withoutComments(string(again)), withoutComments(string(b)); body != want {
		t.Errorf("round trip differs:\n%s\nwant\n%s", body, want)
	}
}

func TestUserDir(t *testing.T) {
	t.Parallel()
	if got, want := config.UserDir("/home/u"), filepath.Join("/home/u", ".yagent"); got != want {
		t.Fatalf("UserDir = %q, want %q", got, want)
	}
}

// withoutComments drops the comment lines Show heads its YAML with.
func withoutComments(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if !strings.HasPrefix(line, "#") {
			b.WriteString(line)
		}
	}
	return b.String()
}
