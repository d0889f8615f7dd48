package profiles_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/profiles"
)

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(profiles.Schema()))
	if err != nil {
		t.Fatalf("schema.json does not parse: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatalf("AddResource: %v", err)
	}
	sch, err := c.Compile("schema.json")
	if err != nil {
		t.Fatalf("schema.json does not compile: %v", err)
	}
	return sch
}

func parseYAML(t *testing.T, b []byte) any {
	t.Helper()
	var v map[string]any
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatalf("yaml: %v", err)
	}
	return v
}

func TestNames_BuiltIns(t *testing.T) {
	t.Parallel()
	want := []string{"browser", "coder", "full", "readonly"}
	if got := profiles.Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %q, want %q", got, want)
	}
	if !slices.Contains(want, profiles.Default) {
		t.Fatalf("Default %q is not a built-in", profiles.Default)
	}
	if _, err := profiles.Read("nope"); err == nil {
		t.Fatal(`Read("nope"): got nil error`)
	}
}

func TestBuiltIns_ValidateAgainstSchema(t *testing.T) {
	t.Parallel()
	sch := compileSchema(t)
	for _, name := range profiles.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b, err := profiles.Read(name)
			if err != nil {
				t.Fatal(err)
			}
			v := parseYAML(t, b)
			if err := sch.Validate(v); err != nil {
				t.Fatalf("%s.yaml does not validate: %v", name, err)
			}
			if got := v.(map[string]any)["name"]; got != name {
				t.Fatalf("%s.yaml: name = %v, want %q", name, got, name)
			}
			if d, _ := v.(map[string]any)["description"].(string); strings.TrimSpace(d) == "" {
				t.Fatalf("%s.yaml: no description", name)
			}
		})
	}
}

// The schema must reject what the loader rejects, or validating the
// built-ins against it proves nothing.
func TestSchema_RejectsBadProfiles(t *testing.T) {
	t.Parallel()
	sch := compileSchema(t)
	tests := []struct {
		name string
		yaml string
	}{
		{"unknown key", "deferd: on\n"},
		{"deferred word", "deferred: sometimes\n"},
		{"unknown family", "families: [fs, mail]\n"},
		{"tier word", "tiers: {grep: lukewarm}\n"},
		{"exec action", "exec: {rules: [{action: maybe, program: rm}]}\n"},
		{"exec rule without program", "exec: {rules: [{action: deny}]}\n"},
		{"negative budget", "schema_budget_bytes: -1\n"},
		{"unknown nested key", "network: {alow: [example.com]}\n"},
		{"sandbox word", "sandbox: maybe\n"},
		{"sandbox network word", "sandbox: {network: sometimes}\n"},
		{"sandbox unknown key", "sandbox: {reed: [/srv]}\n"},
		{"negative pids", "sandbox: {pids: -1}\n"},
		{"memory in words", "sandbox: {memory_mb: 8G}\n"},
		{"fractional temp size", "sandbox: {tmp_size_mb: 1.5}\n"},
		{"relative socket", "sandbox: {unix_sockets: [run/docker.sock]}\n"},
		{"plugin enabled word", "plugins: {hello: {enabled: maybe}}\n"},
		{"relative plugin dev dir", "plugin_dev_dir: bin\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := sch.Validate(parseYAML(t, []byte(tt.yaml))); err == nil {
				t.Fatalf("Validate(%q): got nil error", tt.yaml)
			}
		})
	}
}

// TestBuiltIns_ExecRulesOnlyAsk: the built-in profiles carry no blacklist:
// their exec rules ask before an interpreter starts interactively, and an
// admin may drop them.
func TestBuiltIns_ExecRulesOnlyAsk(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"coder", "full"} {
		b, err := profiles.Read(name)
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Exec struct {
				Rules []struct {
					Action, Program string
					Interactive     bool
				}
			}
		}
		if err := yaml.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		progs := map[string]bool{}
		for _, r := range p.Exec.Rules {
			if r.Action != "ask" || !r.Interactive {
				t.Errorf("%s.yaml: rule %+v; a built-in rule must be an interactive ask", name, r)
			}
			progs[r.Program] = true
		}
		for _, want := range []string{"python3", "node", "perl", "ruby", "irb", "php", "lua", "R", "sqlite3", "psql", "mysql", "gdb"} {
			if !progs[want] {
				t.Errorf("%s.yaml: no interactive ask rule on %s", name, want)
			}
		}
	}
}

// TestBuiltIns_SandboxOn: every built-in profile runs commands in the
// sandbox, their network through the session's proxy, with the package
// registries and code hosts a build needs allowed and nothing of this
// machine or its networks.
func TestBuiltIns_SandboxOn(t *testing.T) {
	t.Parallel()
	for _, name := range profiles.Names() {
		b, err := profiles.Read(name)
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Sandbox struct{ Mode, Network string }
			Network struct{ Allow []string }
		}
		if err := yaml.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		if p.Sandbox.Mode != "on" || p.Sandbox.Network != "proxy" {
			t.Errorf("built-in %s: sandbox %+v, want {mode: on, network: proxy}", name, p.Sandbox)
		}
		for _, host := range []string{"proxy.golang.org", "sum.golang.org", "registry.npmjs.org", "pypi.org", "files.pythonhosted.org", "crates.io", "github.com"} {
			if !slices.Contains(p.Network.Allow, host) {
				t.Errorf("built-in %s: network.allow lacks %s", name, host)
			}
		}
		for _, e := range p.Network.Allow {
			if h, err := policy.ParseHost(strings.TrimPrefix(e, "*.")); err != nil || h.Internal != "" || h.Addr.IsValid() {
				t.Errorf("built-in %s: network.allow entry %q is no public host name", name, e)
			}
		}
	}
}

// TestBuiltIns_SandboxBounds: every built-in profile bounds a command's
// processes and memory and sizes the temp folder, each roomy enough for a
// parallel build, and exposes no Unix socket.
func TestBuiltIns_SandboxBounds(t *testing.T) {
	t.Parallel()
	for _, name := range profiles.Names() {
		b, err := profiles.Read(name)
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Sandbox struct {
				Pids        int      `yaml:"pids"`
				MemoryMB    int      `yaml:"memory_mb"`
				TmpSizeMB   int      `yaml:"tmp_size_mb"`
				UnixSockets []string `yaml:"unix_sockets"`
			}
		}
		if err := yaml.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		sb := p.Sandbox
		if sb.Pids < 1024 || sb.MemoryMB < 2048 || sb.TmpSizeMB < 1024 || len(sb.UnixSockets) > 0 {
			t.Errorf("built-in %s: sandbox bounds %+v, want pids >= 1024, memory_mb >= 2048, tmp_size_mb >= 1024 and no socket", name, sb)
		}
	}
}
