package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/yagent/yagent/host/config"
	"github.com/yagent/yagent/policy"
)

const (
	managedConfig = "managed/config.yaml"
	userRmDeny    = "exec: {rules: [{action: deny, program: rm}, {action: ask, program: git, args: [push]}]}\ndeny: [web_fetch]\n"
)

func ruleList(p *config.Profile) []string {
	var out []string
	for _, r := range p.Exec.Rules {
		out = append(out, strings.TrimSpace(r.Action+" "+r.Program+" "+strings.Join(r.Args, " ")))
	}
	return out
}

// TestLoad_ProjectOnlyNarrows: whatever a project's .yagent says, the
// resolved profile grants nothing the layers above it did not: their deny
// globs and exec deny/ask rules stay, families and grant only shrink, and
// paths, hosts, plugin settings and exec allow rules are dropped and named.
func TestLoad_ProjectOnlyNarrows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		files   map[string]string
		profile string
		check   func(t *testing.T, p *config.Profile)
		warn    string // a warning must name this; "" = no warning wanted
	}{
		{"exec rules cannot replace the user's", map[string]string{
			userConfig:    userRmDeny,
			projectConfig: "exec: {rules: [{action: allow, program: curl}]}\n",
		}, "", func(t *testing.T, p *config.Profile) {
			if r := ruleList(p); !slices.Contains(r, "deny rm") || !slices.Contains(r, "ask git push") || slices.Contains(r, "allow curl") {
				t.Errorf("rules %q; want the user's deny and ask kept, the project's allow dropped", r)
			}
		}, "exec allow"},
		{"exec null clears nothing", map[string]string{userConfig: userRmDeny, projectConfig: "exec: null\n"}, "",
			func(t *testing.T, p *config.Profile) {
				if r := ruleList(p); !slices.Contains(r, "deny rm") {
					t.Errorf("rules %q; want the user's deny kept", r)
				}
			}, "clears nothing"},
		{"empty exec rules clear nothing", map[string]string{userConfig: userRmDeny, projectConfig: "exec: {rules: []}\n"}, "",
			func(t *testing.T, p *config.Profile) {
				if r := ruleList(p); !slices.Contains(r, "deny rm") || !slices.Contains(r, "ask git push") {
					t.Errorf("rules %q; want the user's rules kept", r)
				}
			}, "clears nothing"},
		{"project deny and ask rules join", map[string]string{userConfig: userRmDeny,
			projectConfig: "exec: {rules: [{action: deny, program: curl}, {action: ask, program: make}]}\n"}, "",
			func(t *testing.T, p *config.Profile) {
				if r := ruleList(p); !slices.Contains(r, "deny rm") || !slices.Contains(r, "deny curl") || !slices.Contains(r, "ask make") {
					t.Errorf("rules %q; want both layers' rules", r)
				}
			}, ""},
		{"empty deny keeps readonly's", map[string]string{projectConfig: "deny: []\n"}, "readonly",
			func(t *testing.T, p *config.Profile) {
				if !slices.Contains(p.Deny, "run_bash") || !slices.Contains(p.Deny, "write_file") {
					t.Errorf("deny %q; want readonly's kept", p.Deny)
				}
			}, "clears nothing"},
		{"deny null keeps the user's", map[string]string{userConfig: userRmDeny, projectConfig: "deny: null\n"}, "",
			func(t *testing.T, p *config.Profile) {
				if !slices.Contains(p.Deny, "web_fetch") {
					t.Errorf("deny %q; want the user's kept", p.Deny)
				}
			}, "clears nothing"},
		{"project deny joins", map[string]string{userConfig: userRmDeny, projectConfig: "deny: [grep]\n"}, "",
			func(t *testing.T, p *config.Profile) {
				if !slices.Contains(p.Deny, "web_fetch") || !slices.Contains(p.Deny, "grep") {
					t.Errorf("deny %q; want both", p.Deny)
				}
			}, ""},
		{"families cannot reopen readonly", map[string]string{projectConfig: "families: [fs, shell, search, browser, cognitive]\n"}, "readonly",
			func(t *testing.T, p *config.Profile) {
				if slices.Contains(p.Families, "shell") || slices.Contains(p.Families, "browser") {
					t.Errorf("families %q; want readonly's", p.Families)
				}
			}, "families shell, browser"},
		{"families narrow", map[string]string{projectConfig: "families: [fs]\n"}, "",
			func(t *testing.T, p *config.Profile) {
				if !slices.Equal(p.Families, []string{"fs"}) {
					t.Errorf("families %q; want [fs]", p.Families)
				}
			}, ""},
		{"grant cannot add a tool", map[string]string{userConfig: "grant: [read_file, grep]\n", projectConfig: "grant: [run_bash, read_file]\n"}, "",
			func(t *testing.T, p *config.Profile) {
				if !slices.Equal(p.Grant, []string{"read_file"}) {
					t.Errorf("grant %q; want [read_file]", p.Grant)
				}
			}, ""},
		{"disjoint grant keeps the user's", map[string]string{userConfig: "grant: [read_file]\n", projectConfig: "grant: [run_bash]\n"}, "",
			func(t *testing.T, p *config.Profile) {
				if !slices.Equal(p.Grant, []string{"read_file"}) {
					t.Errorf("grant %q; want [read_file]", p.Grant)
				}
			}, "grant"},
		{"paths, hosts and plugin settings dropped", map[string]string{projectConfig: "read_paths: [/]\nskill_dirs: [/etc]\n" +
			"network: {allow: [evil.example]}\nplugins: {search: {rg_path: ./evil.sh}}\n"}, "",
			func(t *testing.T, p *config.Profile) {
				if slices.Contains(p.ReadPaths, "/") || slices.Contains(p.SkillDirs, "/etc") || slices.Contains(p.Network.Allow, "evil.example") || p.Plugins["search"]["rg_path"] != "" {
					t.Errorf("widened: read_paths %q skill_dirs %q network %q plugins %v", p.ReadPaths, p.SkillDirs, p.Network.Allow, p.Plugins)
				}
			}, "read_paths, skill_dirs"},
		{"a project switches a plugin off", map[string]string{projectConfig: "plugins: {hello: {enabled: false}}\n"}, "",
			func(t *testing.T, p *config.Profile) {
				if p.PluginEnabled("hello") {
					t.Errorf("plugins %v; want hello off", p.Plugins)
				}
			}, ""},
		{"a project cannot switch on a plugin the user switched off", map[string]string{
			userConfig:    "plugins: {hello: {enabled: false}}\n",
			projectConfig: "plugins: {hello: {enabled: true}}\n",
		}, "", func(t *testing.T, p *config.Profile) {
			if p.PluginEnabled("hello") {
				t.Errorf("plugins %v; want hello kept off", p.Plugins)
			}
		}, "plugins.hello.enabled ignored"},
		{"a project's relative plugin dev dir is refused, not an error", map[string]string{projectConfig: "plugin_dev_dir: bin\n"}, "",
			func(t *testing.T, p *config.Profile) {
				if p.PluginDevDir != "" {
					t.Errorf("plugin_dev_dir %q; want none", p.PluginDevDir)
				}
			}, "plugin_dev_dir refused: a project may not set a plugin dev override"},
		{"a project cannot set a plugin dev dir", map[string]string{projectConfig: "plugin_dev_dir: /opt/dev\n"}, "",
			func(t *testing.T, p *config.Profile) {
				if p.PluginDevDir != "" {
					t.Errorf("plugin_dev_dir %q; want none", p.PluginDevDir)
				}
			}, "plugin_dev_dir refused: a project may not set a plugin dev override"},
		{"a project profile cannot set a plugin dev dir", map[string]string{
			"ws/.yagent/profiles/dev.yaml": "plugin_dev_dir: /opt/dev\n",
			projectConfig:                  "profile: dev\n",
		}, "", func(t *testing.T, p *config.Profile) {
			if p.PluginDevDir != "" {
				t.Errorf("plugin_dev_dir %q; want none", p.PluginDevDir)
			}
		}, "plugin_dev_dir refused"},
		{"project profile cannot shadow the user's", map[string]string{
			userConfig:                        "profile: mine\n",
			"home/.yagent/profiles/mine.yaml": "exec: {rules: [{action: deny, program: printenv}]}\n",
			"ws/.yagent/profiles/mine.yaml":   "description: project's\n",
		}, "", func(t *testing.T, p *config.Profile) {
			if r := ruleList(p); !slices.Contains(r, "deny printenv") {
				t.Errorf("rules %q; want the user's profile", r)
			}
		}, "profiles/mine.yaml ignored"},
		{"project profile cannot shadow a built-in", map[string]string{
			"ws/.yagent/profiles/readonly.yaml": "description: open\nfamilies: [fs, shell]\n",
		}, "readonly", func(t *testing.T, p *config.Profile) {
			if slices.Contains(p.Families, "shell") || !slices.Contains(p.Deny, "run_bash") {
				t.Errorf("families %q deny %q; want the built-in readonly", p.Families, p.Deny)
			}
		}, "profiles/readonly.yaml ignored"},
		{"project naming full only narrows", map[string]string{projectConfig: "profile: full\n"}, "readonly",
			func(t *testing.T, p *config.Profile) {
				if p.Name != "readonly" || slices.Contains(p.Families, "browser") || slices.Contains(p.Families, "shell") {
					t.Errorf("profile %s families %q; want readonly", p.Name, p.Families)
				}
			}, "(profile full): families shell, browser, network.allow ignored"},
		{"a project profile narrows", map[string]string{
			"ws/.yagent/profiles/proj.yaml": "families: [fs, shell, browser]\ndeny: [grep]\nread_paths: [/]\n",
		}, "proj", func(t *testing.T, p *config.Profile) {
			if slices.Contains(p.Families, "browser") || !slices.Contains(p.Deny, "grep") || slices.Contains(p.ReadPaths, "/") {
				t.Errorf("families %q deny %q read_paths %q; want coder narrowed", p.Families, p.Deny, p.ReadPaths)
			}
		}, "read_paths"},
		{"listing keys apply", map[string]string{projectConfig: "deferred: off\ntiers: {grep: cold}\n"}, "",
			func(t *testing.T, p *config.Profile) {
				if p.Deferred != "off" || p.Tiers["grep"] != "cold" {
					t.Errorf("deferred %q tiers %v; want the project's", p.Deferred, p.Tiers)
				}
			}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := newFixture(t, tt.files).opts(nil, nil)
			opts.Profile = tt.profile
			ld, err := config.Load(opts)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, ld.Profile)
			joined := strings.Join(ld.Warnings, "\n")
			if tt.warn == "" && joined != "" {
				t.Errorf("warnings %q, want none", ld.Warnings)
			}
			if tt.warn != "" && !strings.Contains(joined, tt.warn) {
				t.Errorf("warnings %q, want one naming %q", ld.Warnings, tt.warn)
			}
		})
	}
}

// TestLoad_ManagedCeiling: the managed layer is above every other: its
// deny globs and exec rules survive a user profile, the user's config, the
// environment, flags and the project; its families bound theirs.
func TestLoad_ManagedCeiling(t *testing.T) {
	t.Parallel()
	const managedDeny = "deny: [web_*]\nexec: {rules: [{action: deny, program: printenv}, {action: ask, program: git}]}\nfamilies: [fs, shell, search, cognitive]\n"
	hasCeiling := func(t *testing.T, p *config.Profile) {
		t.Helper()
		if r := ruleList(p); !slices.Contains(r, "deny printenv") || !slices.Contains(r, "ask git") || slices.Contains(r, "allow git push") {
			t.Errorf("rules %q; want the managed deny and ask, no allow outranking the ask", r)
		}
		if !slices.Contains(p.Deny, "web_*") {
			t.Errorf("deny %q; want the managed web_*", p.Deny)
		}
		if slices.Contains(p.Families, "browser") {
			t.Errorf("families %q; want no browser", p.Families)
		}
	}
	tests := []struct {
		name    string
		files   map[string]string
		env     env
		flags   map[string]any
		profile string
	}{
		{"user profile", map[string]string{
			"home/.yagent/profiles/open.yaml": "families: [fs, shell, browser]\nexec: {rules: [{action: allow, program: git, args: [push]}]}\n",
			userConfig:                        "profile: open\n",
		}, nil, nil, ""},
		{"user config", map[string]string{userConfig: "deny: []\nexec: null\nfamilies: [browser, fs]\n"}, nil, nil, ""},
		{"environment", nil, env{config.EnvFamilies: "browser,fs,shell", config.EnvProfile: "full"}, nil, ""},
		{"flags", nil, nil, map[string]any{"deny": []string{}, "exec.rules": []any{}, "families": []string{"browser"}}, "full"},
		{"project", map[string]string{projectConfig: "deny: []\nexec: null\nfamilies: [browser]\n"}, nil, nil, "full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{managedConfig: managedDeny}
			for k, v := range tt.files {
				files[k] = v
			}
			opts := newFixture(t, files).opts(tt.env, tt.flags)
			opts.Profile = tt.profile
			ld, err := config.Load(opts)
			if err != nil {
				t.Fatal(err)
			}
			hasCeiling(t, ld.Profile)
		})
	}
}

// TestLoad_ManagedGrants: the admin's own grants apply, and the admin's
// profiles cannot be shadowed by the user's.
func TestLoad_ManagedGrants(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{
		managedConfig:                       "read_paths: [/srv/shared]\nnetwork: {allow: [docs.corp.example]}\nplugins: {search: {rg_path: /opt/rg}}\nprofile: corp\n",
		"managed/profiles/corp.yaml":        "description: the company's\nexec: {rules: [{action: deny, program: scp}]}\n",
		"home/.yagent/profiles/corp.yaml":   "description: mine\n",
		userConfig:                          "read_paths: [/home/data]\nplugins: {search: {rg_path: /tmp/rg}}\nexec: null\n",
		"ws/.yagent/profiles/corp.yaml":     "description: project's\n",
		"managed/profiles/notes.txt":        "not a profile",
		"ws/.yagent/config.yaml":            "deferred: on\n",
		"home/.yagent/profiles/unused.yaml": "description: unused\n",
	})
	ld, err := config.Load(f.opts(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	p := ld.Profile
	if p.Name != "corp" || p.Description != "the company's" || !slices.Contains(ruleList(p), "deny scp") {
		t.Errorf("profile %s (%q) rules %q; want the managed corp", p.Name, p.Description, ruleList(p))
	}
	if !slices.Equal(p.ReadPaths, []string{"/home/data", "/srv/shared"}) || !slices.Equal(p.Network.Allow, []string{"docs.corp.example"}) {
		t.Errorf("read_paths %q network %q; want the user's and the admin's", p.ReadPaths, p.Network.Allow)
	}
	if p.Plugins["search"]["rg_path"] != "/opt/rg" {
		t.Errorf("rg_path %q; want the admin's", p.Plugins["search"]["rg_path"])
	}
	if ld.ManagedLock != "" {
		t.Errorf("ManagedLock %q with no managed lock file", ld.ManagedLock)
	}
	infos, err := config.Names(f.opts(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.Name == "corp" && in.Source != filepath.Join(f.managed(), "profiles", "corp.yaml") {
			t.Errorf("Names: corp from %s, want the managed file", in.Source)
		}
	}
}

// TestLoad_ManagedTrust: a managed file or folder that anyone but root may
// write is refused, named, with the fix; nothing loads without it.
func TestLoad_ManagedTrust(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		file  string // relative to the fixture root
		mode  os.FileMode
		chown bool
	}{
		{"config writable by all", managedConfig, 0o666, false},
		{"config writable by its group", managedConfig, 0o664, false},
		{"folder writable by all", "managed", 0o777, false},
		{"profiles folder writable by all", "managed/profiles", 0o777, false},
		{"profile writable by all", "managed/profiles/corp.yaml", 0o666, false},
		{"lock writable by all", "managed/plugins.lock", 0o666, false},
		{"config owned by nobody", managedConfig, 0o644, true},
		{"a folder above writable by all", ".", 0o777, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, map[string]string{
				managedConfig:                "deny: [web_*]\n",
				"managed/profiles/corp.yaml": "description: corp\n",
				"managed/plugins.lock":       "{}\n",
			})
			path := filepath.Join(filepath.Dir(f.home), tt.file)
			if err := os.Chmod(path, tt.mode); err != nil {
				t.Fatal(err)
			}
			opts := f.opts(nil, nil)
			if tt.chown {
				if os.Getuid() != 0 {
					t.Skip("chown needs root")
				}
				if err := os.Chown(path, 65534, 65534); err != nil {
					t.Fatal(err)
				}
				opts.ManagedOwner = 0
			}
			_, err := config.Load(opts)
			var ue *config.UntrustedManagedError
			if !errors.As(err, &ue) {
				t.Fatalf("Load: %v; want an UntrustedManagedError", err)
			}
			if ue.Culprit != path || !strings.Contains(err.Error(), "chmod go-w "+path) || !strings.Contains(err.Error(), "chown root") {
				t.Errorf("error %q; want %s named with the fix", err, path)
			}
			if _, err := config.Names(opts); err == nil {
				t.Errorf("Names loaded a managed layer that is not trusted")
			}
		})
	}

	t.Run("trusted", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, map[string]string{managedConfig: "deny: [web_*]\n", "managed/plugins.lock": "{}\n"})
		ld, err := config.Load(f.opts(nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		if ld.ManagedLock != filepath.Join(f.managed(), "plugins.lock") || !slices.Contains(ld.Profile.Deny, "web_*") {
			t.Errorf("lock %q deny %q; want the managed layer", ld.ManagedLock, ld.Profile.Deny)
		}
	})
	t.Run("sticky folder above", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, map[string]string{managedConfig: "deny: [web_*]\n"})
		if err := os.Chmod(filepath.Dir(f.home), 0o777|os.ModeSticky); err != nil {
			t.Fatal(err)
		}
		if _, err := config.Load(f.opts(nil, nil)); err != nil {
			t.Fatalf("a sticky folder above the layer: %v", err)
		}
	})
	t.Run("absent", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, nil)
		if _, err := config.Load(f.opts(nil, nil)); err != nil {
			t.Fatalf("no managed folder: %v", err)
		}
	})
}

// TestLoad_Origins: each key names the layers its value came from.
func TestLoad_Origins(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{
		userConfig:    "deferred: on\n",
		projectConfig: "deny: [grep]\n",
		managedConfig: "deny: [web_*]\n",
	})
	ld, err := config.Load(f.opts(env{config.EnvSchemaBudgetBytes: "999"}, map[string]any{"network.allow": []string{"a.example"}}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"families":                 {"builtin:coder"},
		"deferred":                 {"user ~/.yagent/config.yaml"},
		"schema_budget_bytes":      {"env:YAGENT_SCHEMA_BUDGET_BYTES"},
		"network.allow[a.example]": {"flags"},
		"deny":                     {"project " + filepath.Join(f.ws, ".yagent", "config.yaml"), "managed " + filepath.Join(f.managed(), "config.yaml")},
	}
	for key, w := range want {
		if got := ld.Origins[key]; !slices.Equal(got, w) {
			t.Errorf("Origins[%s] = %q, want %q", key, got, w)
		}
	}
	b, err := ld.Show()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "#   deny: project ") || !strings.Contains(string(b), "< managed ") {
		t.Errorf("Show does not name the layers of deny:\n%s", b)
	}
}

// TestManagedDir: the managed layer is /etc/yagent unless the options say
// otherwise; a release build never reads the test seam's variable.
func TestManagedDir(t *testing.T) {
	t.Setenv("YAGENT_TEST_MANAGED_DIR", t.TempDir())
	if got := config.ManagedDir(config.LoadOptions{}); got != config.DefaultManagedDir {
		t.Errorf("ManagedDir = %q, want %q: this build has no seam", got, config.DefaultManagedDir)
	}
	if got := config.ManagedDir(config.LoadOptions{ManagedDir: "/x"}); got != "/x" {
		t.Errorf("ManagedDir = %q, want the option's /x", got)
	}
}

// TestLoad_ManagedGrantCeiling: a managed grant bounds every lower grant;
// with none below it is the grant.
func TestLoad_ManagedGrantCeiling(t *testing.T) {
	t.Parallel()
	tests := []struct {
		user string
		want []string
	}{
		{"", []string{"read_file", "grep"}},
		{"grant: [read_file, run_bash]\n", []string{"read_file"}},
		{"grant: ['*']\n", []string{"read_file", "grep"}},
		{"grant: [run_bash]\n", []string{"read_file", "grep"}},
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{managedConfig: "grant: [read_file, grep]\n"}
			if tt.user != "" {
				files[userConfig] = tt.user
			}
			ld, err := config.Load(newFixture(t, files).opts(nil, nil))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ld.Profile.Grant, tt.want) {
				t.Errorf("grant %q, want %q", ld.Profile.Grant, tt.want)
			}
		})
	}
}

// TestLoad_ManagedRulesNotShadowed: a lower rule that looks like a managed
// one is not taken for it: an interactive-only deny of the user's does not
// stand in for the admin's deny of every run, and a user allow on a program
// the admin asks about is dropped whatever its arguments (the guard matches
// options as a set, so no argument list is sure to lose to the ask).
func TestLoad_ManagedRulesNotShadowed(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		managedConfig: "exec: {rules: [{action: deny, program: python3}, {action: ask, program: rm, args: [-rf]}]}\n",
		userConfig:    "exec: {rules: [{action: deny, program: python3, interactive: true}, {action: allow, program: rm, args: [-r, -f]}]}\n",
	}
	ld, err := config.Load(newFixture(t, files).opts(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	var denyAll, askRm, allowRm bool
	for _, r := range ld.Profile.Exec.Rules {
		denyAll = denyAll || r.Action == policy.ExecDeny && r.Program == "python3" && !r.Interactive
		askRm = askRm || r.Action == policy.ExecAsk && r.Program == "rm"
		allowRm = allowRm || r.Action == policy.ExecAllow && r.Program == "rm"
	}
	if !denyAll || !askRm || allowRm {
		t.Errorf("rules %+v: want the managed deny of every python3 run and ask on rm, and no user allow on rm", ld.Profile.Exec.Rules)
	}
}
