package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/yagent/yagent/host/config"
)

// TestLoad_SandboxLayers: the user and the flags may turn the sandbox off
// where the managed layer does not forbid it; the project only raises the
// mode and turns the network off; the managed layer is a floor of
// strictness nobody below goes under.
func TestLoad_SandboxLayers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		files   map[string]string
		flags   map[string]any
		mode    string
		network bool
		warn    string // a warning must name this; "" = none
		origin  string // Origins["sandbox.mode"] must end with a layer holding this; "-" = none
	}{
		{"built-in default", nil, nil, "on", true, "", "builtin:coder"},
		{"user shorthand off", map[string]string{userConfig: "sandbox: off\n"}, nil, "off", true, "", "user"},
		{"user boolean off", map[string]string{userConfig: "sandbox: {mode: false, network: false}\n"}, nil, "off", false, "", "user"},
		{"flag off", nil, map[string]any{"sandbox.mode": "off"}, "off", true, "", "flags"},
		{"flag required over user off", map[string]string{userConfig: "sandbox: off\n"}, map[string]any{"sandbox.mode": "required"}, "required", true, "", "flags"},
		{"project cannot lower", map[string]string{projectConfig: "sandbox: off\n"}, nil, "on", true, "sandbox.mode off", "builtin:coder"},
		{"project cannot lower required", map[string]string{userConfig: "sandbox: required\n", projectConfig: "sandbox: {mode: on}\n"}, nil, "required", true, "sandbox.mode on", "user"},
		{"project raises", map[string]string{projectConfig: "sandbox: required\n"}, nil, "required", true, "", "project"},
		{"project raises over user off", map[string]string{userConfig: "sandbox: off\n", projectConfig: "sandbox: on\n"}, nil, "on", true, "", "project"},
		{"project network off", map[string]string{projectConfig: "sandbox: {network: off}\n"}, nil, "on", false, "", "builtin:coder"},
		{"project cannot turn the network on", map[string]string{userConfig: "sandbox: {network: off}\n", projectConfig: "sandbox: {network: on}\n"}, nil, "on", false, "sandbox.network on", "builtin:coder"},
		{"managed required holds against the user", map[string]string{managedConfig: "sandbox: required\n", userConfig: "sandbox: off\n"}, nil, "required", true, "", "managed"},
		{"managed required holds against the flag", map[string]string{managedConfig: "sandbox: {mode: required}\n"}, map[string]any{"sandbox.mode": "off"}, "required", true, "", "managed"},
		{"managed on holds against off", map[string]string{managedConfig: "sandbox: on\n", userConfig: "sandbox: off\n"}, map[string]any{"sandbox.mode": "off"}, "on", true, "", "managed"},
		{"managed on lets the user raise", map[string]string{managedConfig: "sandbox: on\n", userConfig: "sandbox: required\n"}, nil, "required", true, "", "user"},
		{"managed off lets the user raise", map[string]string{managedConfig: "sandbox: off\n", userConfig: "sandbox: on\n"}, nil, "on", true, "", "user"},
		{"managed network off holds", map[string]string{managedConfig: "sandbox: {network: off}\n", userConfig: "sandbox: {network: on}\n"}, nil, "on", false, "", "builtin:coder"},
		{"a custom profile without sandbox is on", map[string]string{"home/.yagent/profiles/mine.yaml": "description: mine\n", userConfig: "profile: mine\n"}, nil, "on", true, "", "-"},
		{"managed profile is a ceiling", map[string]string{"managed/profiles/corp.yaml": "sandbox: required\n", userConfig: "profile: corp\nsandbox: off\n"}, nil, "required", true, "", "managed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ld, err := config.Load(newFixture(t, tt.files).opts(nil, tt.flags))
			if err != nil {
				t.Fatal(err)
			}
			p := ld.Profile
			if p.SandboxMode() != tt.mode || p.SandboxNetwork() != tt.network {
				t.Errorf("sandbox mode %q network %v, want %q %v", p.SandboxMode(), p.SandboxNetwork(), tt.mode, tt.network)
			}
			joined := strings.Join(ld.Warnings, "\n")
			if tt.warn == "" && joined != "" {
				t.Errorf("warnings %q, want none", ld.Warnings)
			}
			if tt.warn != "" && !strings.Contains(joined, tt.warn) {
				t.Errorf("warnings %q, want one naming %q", ld.Warnings, tt.warn)
			}
			o := ld.Origins["sandbox.mode"]
			if tt.origin == "-" {
				if len(o) > 0 {
					t.Errorf("origins of sandbox.mode %q, want none (the default)", o)
				}
				if p.Sandbox.Mode != tt.mode || p.Sandbox.Network != "on" {
					t.Errorf("resolved sandbox %+v, want the default filled in", p.Sandbox)
				}
				return
			}
			if len(o) == 0 || !strings.Contains(o[len(o)-1], tt.origin) {
				t.Errorf("origins of sandbox.mode %q, want the last naming %q", o, tt.origin)
			}
		})
	}
}

// TestLoad_SandboxProjectPathsIgnored: a project names no path the
// sandbox opens, and the warning says which keys it dropped.
func TestLoad_SandboxProjectPathsIgnored(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{
		userConfig:    "sandbox: {read: [/srv/data]}\n",
		projectConfig: "sandbox: {read: [/], write: [~/.ssh], mode: required}\n",
	})
	ld, err := config.Load(f.opts(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	sb := ld.Profile.Sandbox
	if !slices.Equal(sb.Read, []string{"/srv/data"}) || len(sb.Write) > 0 {
		t.Errorf("sandbox read %q write %q, want only the user's /srv/data", sb.Read, sb.Write)
	}
	if sb.Mode != config.SandboxRequired {
		t.Errorf("mode %q, want the project's raise to required kept", sb.Mode)
	}
	if w := strings.Join(ld.Warnings, "\n"); !strings.Contains(w, "sandbox.read, sandbox.write ignored") {
		t.Errorf("warnings %q, want sandbox.read and sandbox.write named", ld.Warnings)
	}
}

// TestLoad_SandboxManagedPathsJoin: the admin's own paths join the user's.
func TestLoad_SandboxManagedPathsJoin(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{
		managedConfig: "sandbox: {read: [/srv/shared], write: [/srv/out]}\n",
		userConfig:    "sandbox: {read: [/srv/mine]}\n",
	})
	ld, err := config.Load(f.opts(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if sb := ld.Profile.Sandbox; !slices.Equal(sb.Read, []string{"/srv/mine", "/srv/shared"}) || !slices.Equal(sb.Write, []string{"/srv/out"}) {
		t.Errorf("sandbox read %q write %q, want the user's and the admin's", sb.Read, sb.Write)
	}
}

// TestLoad_SandboxPaths: ~ is expanded, relative paths join the
// workspace, symlinks are resolved once, a missing tail is kept.
func TestLoad_SandboxPaths(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{
		userConfig:           "sandbox: {read: [~/link, ~/link/new/sub], write: [out, ~/data/]}\n",
		"home/data/keep.txt": "x",
	})
	if err := os.Symlink(filepath.Join(f.home, "data"), filepath.Join(f.home, "link")); err != nil {
		t.Fatal(err)
	}
	ld, err := config.Load(f.opts(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	home, _ := filepath.EvalSymlinks(f.home)
	ws, _ := filepath.EvalSymlinks(f.ws)
	sb := ld.Profile.Sandbox
	if want := []string{filepath.Join(home, "data"), filepath.Join(home, "data/new/sub")}; !slices.Equal(sb.Read, want) {
		t.Errorf("sandbox.read %q, want %q", sb.Read, want)
	}
	if want := []string{filepath.Join(ws, "out"), filepath.Join(home, "data")}; !slices.Equal(sb.Write, want) {
		t.Errorf("sandbox.write %q, want %q", sb.Write, want)
	}
}

// TestLoad_SandboxInvalid: bad values are refused with the file and the
// key named.
func TestLoad_SandboxInvalid(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ yaml, key string }{
		{"sandbox: maybe\n", `"sandbox.mode": invalid value "maybe"`},
		{"sandbox: {mode: strict}\n", `"sandbox.mode"`},
		{"sandbox: {network: wifi}\n", `"sandbox.network": invalid value "wifi"`},
		{"sandbox: {reed: [/x]}\n", `unknown key "sandbox.reed"`},
		{"sandbox: {write: [\"\"]}\n", `"sandbox.write[0]"`},
		{"sandbox: [on]\n", `"sandbox": want a map`},
	} {
		_, err := config.Load(newFixture(t, map[string]string{userConfig: tt.yaml}).opts(nil, nil))
		if err == nil || !strings.Contains(err.Error(), "config.yaml") || !strings.Contains(err.Error(), tt.key) {
			t.Errorf("Load(%q): error %v, want one naming config.yaml and %s", tt.yaml, err, tt.key)
		}
	}
}

// TestShow_SandboxOrigins: profiles show names where each sandbox key
// comes from.
func TestShow_SandboxOrigins(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{userConfig: "sandbox: {network: off}\n"})
	out, err := config.Show(f.opts(nil, map[string]any{"sandbox.mode": "required"}), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#   sandbox.mode: flags", "#   sandbox.network: user ~/.yagent/config.yaml", "mode: required", "network: \"off\""} {
		if !strings.Contains(string(out), want) {
			t.Errorf("Show:\n%s\nwant a line %q", out, want)
		}
	}
}
