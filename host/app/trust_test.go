package app

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/yagent/yagent/host/config"
	"github.com/yagent/yagent/host/pluginmgr"
	"github.com/yagent/yagent/internal/testbuild"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk/sandbox"
)

// TestCommandWriteRoots: with the sandbox on and Landlock here, the roots
// are the sandbox's write rules; otherwise the folders a command writes
// without an ask.
func TestCommandWriteRoots(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, extra, tmp := filepath.Join(base, "ws"), filepath.Join(base, "extra"), filepath.Join(base, "tmp")
	for _, d := range []string{ws, extra, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") }), "TMPDIR="+tmp)
	for _, c := range []struct {
		name     string
		mode     string
		landlock bool
		want     []string
		not      []string
	}{
		{"sandbox on, Landlock", policy.SandboxOn, true, []string{ws, extra, tmp, "/tmp"}, []string{"/var/tmp", "/usr"}},
		{"sandbox required, Landlock", policy.SandboxRequired, true, []string{ws, extra, tmp, "/tmp"}, []string{"/var/tmp"}},
		{"sandbox on, no Landlock", policy.SandboxOn, false, []string{ws, tmp, "/tmp", "/var/tmp"}, []string{extra, "/usr"}},
		{"sandbox off, Landlock", policy.SandboxOff, true, []string{ws, tmp, "/tmp", "/var/tmp"}, []string{extra, "/usr"}},
	} {
		prof := &config.Profile{}
		prof.Sandbox.Mode = c.mode
		prof.Sandbox.Write = []string{extra}
		var got []string
		for _, r := range commandWriteRoots(ws, prof, c.landlock, env, "") {
			got = append(got, r.Path)
			if r.Path == ws && !strings.Contains(r.Name, "the workspace") {
				t.Errorf("%s: the workspace is named %q", c.name, r.Name)
			}
		}
		for _, w := range c.want {
			if _, err := os.Stat(w); err == nil && !slices.Contains(got, w) {
				t.Errorf("%s: roots %v lack %s", c.name, got, w)
			}
		}
		for _, n := range c.not {
			if slices.Contains(got, n) {
				t.Errorf("%s: roots %v hold %s", c.name, got, n)
			}
		}
	}
}

// TestOpen_PlantedPluginNeverRuns: a plugin binary in the workspace runs
// only when the program vouches for its sum; one in a folder no command
// can write runs as before.
func TestOpen_PlantedPluginNeverRuns(t *testing.T) {
	t.Parallel()
	outside, err := testbuild.BinDir("app-trust-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	for _, c := range []struct {
		name     string
		landlock bool
		inWS     bool   // the plugin folder is in the workspace, else outside
		vouch    bool   // PluginSums names the binary's sum
		want     string // a part of the refusal; "" = it runs
	}{
		{name: "in the workspace, Landlock", landlock: true, inWS: true, want: "is in a folder commands can write (inside the workspace"},
		{name: "in the workspace, no Landlock", inWS: true, want: "is in a folder commands can write (inside the workspace"},
		{name: "in the workspace, vouched for", landlock: true, inWS: true, vouch: true},
		{name: "outside, Landlock", landlock: true},
		{name: "outside, no Landlock"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
			dir, err := filepath.Join(ws, "bin", "plugins"), error(nil)
			if !c.inWS {
				if dir, err = os.MkdirTemp(outside, "case-"); err != nil {
					t.Fatal(err)
				}
			}
			for _, d := range []string{dir, ws, home} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			mark := filepath.Join(root, "ran")
			bin := filepath.Join(dir, pluginmgr.BinaryPrefix+"zz")
			if err := os.WriteFile(bin, []byte("#!/bin/sh\ntouch "+mark+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			sum, err := policy.SumFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{Workspace: ws, Home: home, PluginDirs: []string{dir}, PluginSums: map[string]string{},
				ProbeSandbox: func() (sandbox.Layers, string, error) {
					if c.landlock {
						return sandbox.Layers{LandlockABI: 7}, "", nil
					}
					return sandbox.Layers{Missing: map[string]string{sandbox.LayerLandlock: "not on this test machine"}}, "", nil
				}}
			if c.vouch {
				opts.PluginSums["zz"] = sum
			}
			a, err := Open(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close(context.Background())
			if len(a.All) != 1 {
				t.Fatalf("plugins %v, want zz", a.All)
			}
			p := a.All[0]
			_, ranErr := os.Stat(mark)
			if c.want != "" {
				if !pluginmgr.IsUntrusted(p.Refused) || !strings.Contains(p.Refused.Error(), c.want) || p.SHA256 != sum {
					t.Errorf("refused %v (sum %q); want refused as untrusted saying %q, with its sum", p.Refused, p.SHA256, c.want)
				}
				if !strings.Contains(strings.Join(a.Warnings, "\n"), "yagent plugins pin zz") {
					t.Errorf("the warnings do not say why nor how to trust it: %q", a.Warnings)
				}
				if ranErr == nil {
					t.Error("the refused binary ran")
				}
				return
			}
			if pluginmgr.IsUntrusted(p.Refused) || ranErr != nil {
				t.Errorf("refused %v, ran %v: want it launched (it then fails the handshake)", p.Refused, ranErr == nil)
			}
		})
	}
}
