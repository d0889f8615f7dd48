package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/yagent/yagent/host/config"
	"github.com/yagent/yagent/policy"
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
		network string
		warn    string // a warning must name this; "" = none
		origin  string // Origins["sandbox.mode"] must end with a layer holding this; "-" = none
	}{
		{"built-in default", nil, nil, "on", "proxy", "", "builtin:coder"},
		{"user shorthand off", map[string]string{userConfig: "sandbox: off\n"}, nil, "off", "proxy", "", "user"},
		{"user boolean off", map[string]string{userConfig: "sandbox: {mode: false, network: false}\n"}, nil, "off", "off", "", "user"},
		{"flag off", nil, map[string]any{"sandbox.mode": "off"}, "off", "proxy", "", "flags"},
		{"flag required over user off", map[string]string{userConfig: "sandbox: off\n"}, map[string]any{"sandbox.mode": "required"}, "required", "proxy", "", "flags"},
		{"project cannot lower", map[string]string{projectConfig: "sandbox: off\n"}, nil, "on", "proxy", "sandbox.mode off", "builtin:coder"},
		{"project cannot lower required", map[string]string{userConfig: "sandbox: required\n", projectConfig: "sandbox: {mode: on}\n"}, nil, "required", "proxy", "sandbox.mode on", "user"},
		{"project raises", map[string]string{projectConfig: "sandbox: required\n"}, nil, "required", "proxy", "", "project"},
		{"project raises over user off", map[string]string{userConfig: "sandbox: off\n", projectConfig: "sandbox: on\n"}, nil, "on", "proxy", "", "project"},
		{"project network off", map[string]string{projectConfig: "sandbox: {network: off}\n"}, nil, "on", "off", "", "builtin:coder"},
		{"project cannot turn the network on", map[string]string{userConfig: "sandbox: {network: off}\n", projectConfig: "sandbox: {network: on}\n"}, nil, "on", "off", "sandbox.network on", "builtin:coder"},
		{"managed required holds against the user", map[string]string{managedConfig: "sandbox: required\n", userConfig: "sandbox: off\n"}, nil, "required", "proxy", "", "managed"},
		{"managed required holds against the flag", map[string]string{managedConfig: "sandbox: {mode: required}\n"}, map[string]any{"sandbox.mode": "off"}, "required", "proxy", "", "managed"},
		{"managed on holds against off", map[string]string{managedConfig: "sandbox: on\n", userConfig: "sandbox: off\n"}, map[string]any{"sandbox.mode": "off"}, "on", "proxy", "", "managed"},
		{"managed on lets the user raise", map[string]string{managedConfig: "sandbox: on\n", userConfig: "sandbox: required\n"}, nil, "required", "proxy", "", "user"},
		{"managed off lets the user raise", map[string]string{managedConfig: "sandbox: off\n", userConfig: "sandbox: on\n"}, nil, "on", "proxy", "", "user"},
		{"managed network off holds", map[string]string{managedConfig: "sandbox: {network: off}\n", userConfig: "sandbox: {network: on}\n"}, nil, "on", "off", "", "builtin:coder"},
		{"a custom profile without sandbox is on", map[string]string{"home/.yagent/profiles/mine.yaml": "description: mine\n", userConfig: "profile: mine\n"}, nil, "on", "on", "", "-"},
		{"managed profile is a ceiling", map[string]string{"managed/profiles/corp.yaml": "sandbox: required\n", userConfig: "profile: corp\nsandbox: off\n"}, nil, "required", "on", "", "managed"},
		{"project lowers the network to proxy", map[string]string{projectConfig: "sandbox: {network: proxy}\n"}, nil, "on", "proxy", "", "builtin:coder"},
		{"project cannot raise proxy", map[string]string{userConfig: "sandbox: {network: proxy}\n", projectConfig: "sandbox: {network: on}\n"}, nil, "on", "proxy", "sandbox.network on", "builtin:coder"},
		{"managed proxy holds against on", map[string]string{managedConfig: "sandbox: {network: proxy}\n", userConfig: "sandbox: {network: on}\n"}, map[string]any{"sandbox.network": "on"}, "on", "proxy", "", "builtin:coder"},
		{"managed proxy lets the user lower", map[string]string{managedConfig: "sandbox: {network: proxy}\n", userConfig: "sandbox: {network: off}\n"}, nil, "on", "off", "", "builtin:coder"},
		{"managed off holds against proxy", map[string]string{managedConfig: "sandbox: {network: off}\n", userConfig: "sandbox: {network: proxy}\n"}, nil, "on", "off", "", "builtin:coder"},
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
				t.Errorf("sandbox mode %q network %q, want %q %q", p.SandboxMode(), p.SandboxNetwork(), tt.mode, tt.network)
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
	if sb.Mode != policy.SandboxRequired {
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

// TestLoad_SandboxBounds: sandbox.pids, memory_mb and tmp_size_mb layer
// like the other sandbox keys: any layer but the project sets them; a
// project may only lower one (a positive number below it, or any where
// there is none), and a wider value is dropped and named; the managed
// layer caps each, a bound no lower layer set included.
func TestLoad_SandboxBounds(t *testing.T) {
	t.Parallel()
	type bounds struct{ pids, mem, tmp int }
	tests := []struct {
		name   string
		files  map[string]string
		flags  map[string]any
		want   bounds
		warn   string // a warning must name this; "" = none
		origin string // Origins["sandbox.pids"] must end with a layer holding this
	}{
		{"built-in defaults", nil, nil, bounds{4096, 8192, 4096}, "", "builtin:coder"},
		{"user raises", map[string]string{userConfig: "sandbox: {pids: 10000, memory_mb: 16384}\n"}, nil, bounds{10000, 16384, 4096}, "", "user"},
		{"user lifts a bound", map[string]string{userConfig: "sandbox: {pids: 0}\n"}, nil, bounds{0, 8192, 4096}, "", "user"},
		{"flag sets", nil, map[string]any{"sandbox.pids": 512}, bounds{512, 8192, 4096}, "", "flags"},
		{"project lowers", map[string]string{projectConfig: "sandbox: {pids: 100, memory_mb: 512, tmp_size_mb: 256}\n"}, nil,
			bounds{100, 512, 256}, "", "project"},
		{"project cannot raise", map[string]string{projectConfig: "sandbox: {pids: 9000}\n"}, nil, bounds{4096, 8192, 4096},
			"sandbox.pids 9000 (a project may only lower it below 4096)", "builtin:coder"},
		{"project cannot lift", map[string]string{projectConfig: "sandbox: {memory_mb: 0, tmp_size_mb: 5000}\n"}, nil, bounds{4096, 8192, 4096},
			"sandbox.memory_mb 0, none (a project may only lower it below 8192), sandbox.tmp_size_mb 5000", "builtin:coder"},
		{"project bounds what the user left unbounded", map[string]string{userConfig: "sandbox: {pids: 0}\n", projectConfig: "sandbox: {pids: 50}\n"}, nil,
			bounds{50, 8192, 4096}, "", "project"},
		{"managed caps the user", map[string]string{managedConfig: "sandbox: {pids: 1000, memory_mb: 2048}\n", userConfig: "sandbox: {pids: 5000}\n"}, nil,
			bounds{1000, 2048, 4096}, "", "managed"},
		{"managed caps the flag", map[string]string{managedConfig: "sandbox: {pids: 1000}\n"}, map[string]any{"sandbox.pids": 99999},
			bounds{1000, 8192, 4096}, "", "managed"},
		{"managed cap above the user's", map[string]string{managedConfig: "sandbox: {pids: 1000}\n", userConfig: "sandbox: {pids: 500}\n"}, nil,
			bounds{500, 8192, 4096}, "", "user"},
		{"managed bounds what the user lifted", map[string]string{managedConfig: "sandbox: {pids: 2000, tmp_size_mb: 1024}\n", userConfig: "sandbox: {pids: 0, tmp_size_mb: 0}\n"}, nil,
			bounds{2000, 8192, 1024}, "", "managed"},
		{"managed 0 is no cap", map[string]string{managedConfig: "sandbox: {pids: 0}\n", userConfig: "sandbox: {pids: 9000}\n"}, nil,
			bounds{9000, 8192, 4096}, "", "user"},
		{"managed profile is a ceiling", map[string]string{"managed/profiles/corp.yaml": "sandbox: {pids: 100}\n", userConfig: "profile: corp\nsandbox: {pids: 500}\n"}, nil,
			bounds{100, 0, 0}, "", "managed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ld, err := config.Load(newFixture(t, tt.files).opts(nil, tt.flags))
			if err != nil {
				t.Fatal(err)
			}
			sb := ld.Profile.Sandbox
			if got := (bounds{sb.Pids, sb.MemoryMB, sb.TmpSizeMB}); got != tt.want {
				t.Errorf("pids, memory_mb, tmp_size_mb = %v, want %v", got, tt.want)
			}
			joined := strings.Join(ld.Warnings, "\n")
			if tt.warn == "" && joined != "" {
				t.Errorf("warnings %q, want none", ld.Warnings)
			}
			if tt.warn != "" && !strings.Contains(joined, tt.warn) {
				t.Errorf("warnings %q, want one naming %q", ld.Warnings, tt.warn)
			}
			if o := ld.Origins["sandbox.pids"]; len(o) == 0 || !strings.Contains(o[len(o)-1], tt.origin) {
				t.Errorf("origins of sandbox.pids %q, want the last naming %q", o, tt.origin)
			}
		})
	}
}

// TestLoad_SandboxUnixSockets: the list is the admin's word, resolved; a
// project may only remove entries (one it adds is dropped and named);
// the managed layer's list bounds the others': a socket stays where both
// name it, and an empty managed list leaves none.
func TestLoad_SandboxUnixSockets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		want  []string // under the fixture's run folder
		warn  string
	}{
		{"none by default", nil, nil, ""},
		{"user lists", map[string]string{userConfig: "sandbox: {unix_sockets: [RUN/a.sock, RUN/b.sock]}\n"}, []string{"a.sock", "b.sock"}, ""},
		{"a link is resolved", map[string]string{userConfig: "sandbox: {unix_sockets: [LINK/a.sock, RUN/a.sock]}\n"}, []string{"a.sock"}, ""},
		{"project removes", map[string]string{userConfig: "sandbox: {unix_sockets: [RUN/a.sock, RUN/b.sock]}\n",
			projectConfig: "sandbox: {unix_sockets: [RUN/b.sock]}\n"}, []string{"b.sock"}, ""},
		{"project removes all", map[string]string{userConfig: "sandbox: {unix_sockets: [RUN/a.sock]}\n",
			projectConfig: "sandbox: {unix_sockets: []}\n"}, nil, ""},
		{"project cannot add", map[string]string{userConfig: "sandbox: {unix_sockets: [RUN/a.sock]}\n",
			projectConfig: "sandbox: {unix_sockets: [RUN/a.sock, /var/run/docker.sock]}\n"}, []string{"a.sock"},
			"sandbox.unix_sockets /var/run/docker.sock (a project may only remove sockets from the list)"},
		{"project names one through a link", map[string]string{userConfig: "sandbox: {unix_sockets: [RUN/a.sock, RUN/b.sock]}\n",
			projectConfig: "sandbox: {unix_sockets: [LINK/a.sock]}\n"}, []string{"a.sock"}, ""},
		{"managed bounds the user's", map[string]string{managedConfig: "sandbox: {unix_sockets: [LINK/a.sock]}\n",
			userConfig: "sandbox: {unix_sockets: [RUN/a.sock, RUN/b.sock]}\n"}, []string{"a.sock"}, ""},
		{"managed list opens nothing itself", map[string]string{managedConfig: "sandbox: {unix_sockets: [RUN/a.sock]}\n"}, nil, ""},
		{"managed empty list leaves none", map[string]string{managedConfig: "sandbox: {unix_sockets: []}\n",
			userConfig: "sandbox: {unix_sockets: [RUN/a.sock]}\n"}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			run := filepath.Join(filepath.Dir(f.home), "run")
			link := filepath.Join(filepath.Dir(f.home), "link")
			if err := os.MkdirAll(run, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(run, link); err != nil {
				t.Fatal(err)
			}
			for name, body := range tt.files {
				body = strings.NewReplacer("RUN", run, "LINK", link).Replace(body)
				p := filepath.Join(filepath.Dir(f.home), filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ld, err := config.Load(f.opts(nil, nil))
			if err != nil {
				t.Fatal(err)
			}
			realRun, _ := filepath.EvalSymlinks(run)
			var want []string
			for _, w := range tt.want {
				want = append(want, filepath.Join(realRun, w))
			}
			if got := ld.Profile.Sandbox.UnixSockets; !slices.Equal(got, want) {
				t.Errorf("unix_sockets %q, want %q", got, want)
			}
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

// TestLoad_SandboxBoundsInvalid: a negative or huge bound and a relative
// socket are refused with the key named.
func TestLoad_SandboxBoundsInvalid(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ yaml, key string }{
		{"sandbox: {pids: -1}\n", `"sandbox.pids": invalid value -1 (want 0 for no bound`},
		{"sandbox: {memory_mb: 99999999999}\n", `"sandbox.memory_mb": invalid value`},
		{"sandbox: {tmp_size_mb: -5}\n", `"sandbox.tmp_size_mb": invalid value -5 (want 0 for no size of its own`},
		{"sandbox: {memory_mb: 8G}\n", `"sandbox.memory_mb": want a whole number`},
		{"sandbox: {unix_sockets: [docker.sock]}\n", `"sandbox.unix_sockets[0]": invalid path "docker.sock"`},
	} {
		_, err := config.Load(newFixture(t, map[string]string{userConfig: tt.yaml}).opts(nil, nil))
		if err == nil || !strings.Contains(err.Error(), tt.key) {
			t.Errorf("Load(%q): error %v, want one naming %s", tt.yaml, err, tt.key)
		}
	}
}

// TestShow_SandboxBoundsOrigins: profiles show names the bounds and where
// each comes from, a project's lowering included.
func TestShow_SandboxBoundsOrigins(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{
		projectConfig: "sandbox: {pids: 256}\n",
		managedConfig: "sandbox: {memory_mb: 1024}\n",
	})
	out, err := config.Show(f.opts(nil, nil), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"#   sandbox.pids: builtin:coder < project " + f.ws + "/.yagent/config.yaml",
		"#   sandbox.memory_mb: builtin:coder < managed ",
		"#   sandbox.tmp_size_mb: builtin:coder",
		"pids: 256", "memory_mb: 1024", "tmp_size_mb: 4096",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("Show:\n%s\nwant a line %q", out, want)
		}
	}
}
