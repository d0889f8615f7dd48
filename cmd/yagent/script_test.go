package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/yagent/yagent/host/app"
	"github.com/yagent/yagent/internal/testbuild"
	"github.com/yagent/yagent/sdk/sandbox"
	"github.com/yagent/yagent/sdk/sandbox/cgroup"
)

// pluginDir holds the plugins the scripts use, built from source by TestMain.
var pluginDir string

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"yagent": func() {
			fakeLayers(os.Getenv("YAGENT_TEST_LAYERS"))
			if err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
				fmt.Fprintln(os.Stderr, "yagent:", err)
				os.Exit(exitCode(err))
			}
		},
	})
}

// fakeLayers plays a machine with every sandbox layer ("all") or none
// ("none"); "" keeps this machine's.
func fakeLayers(which string) {
	switch which {
	case "all":
		probeLayers = func() (sandbox.Layers, string, error) {
			return sandbox.Layers{LandlockABI: 7, Seccomp: true, CapDrop: true, MountNS: true, NetNS: true}, "/sys/fs/cgroup/test", nil
		}
		probeBounds = func(sandbox.Layers) []cgroup.Enforcement {
			return []cgroup.Enforcement{{Bound: cgroup.BoundPids, Via: cgroup.ViaV2, Dir: "/sys/fs/cgroup/test/yagent.1"},
				{Bound: cgroup.BoundMemory, Via: cgroup.ViaV1, Dir: "/sys/fs/cgroup/memory/test/yagent.1"},
				{Bound: app.BoundTmpSize, Via: "tmpfs", Dir: "/var/tmp/yagent-tmp-test"}}
		}
	case "none":
		why := "not on this test machine"
		probeLayers = func() (sandbox.Layers, string, error) {
			return sandbox.Layers{Missing: map[string]string{sandbox.LayerLandlock: why, sandbox.LayerSeccomp: why,
				sandbox.LayerCaps: why, sandbox.LayerMountNS: why, sandbox.LayerNetNS: why}}, "", cgroup.ErrUnavailable
		}
		probeBounds = func(sandbox.Layers) []cgroup.Enforcement {
			return []cgroup.Enforcement{{Bound: cgroup.BoundPids, Why: why}, {Bound: cgroup.BoundMemory, Why: why}, {Bound: app.BoundTmpSize, Why: why}}
		}
	}
}

// TestScripts runs the CLI end to end over testdata/script/*.txtar, with
// the cognitive and hello plugins built from source in $PLUGINS.
func TestScripts(t *testing.T) {
	// Outside the temp folders: the test binary vouches for no plugin, and
	// the host refuses one there that nothing vouches for.
	dir, err := testbuild.BinDir("yagent-script-plugins-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	repo, err := testbuild.Root()
	if err != nil {
		t.Fatal(err)
	}
	if err := testbuild.Build(
		testbuild.Plugin(dir, "cognitive"),
		testbuild.Target{Pkg: "./examples/hello", Out: filepath.Join(dir, "yagent-plugin-hello")},
		testbuild.Target{Pkg: "./test/e2e/testplugin", Out: filepath.Join(dir, "yagent-plugin-probe")},
	); err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("PLUGINS", dir)
			// This checkout, for plugins init --yagent.
			env.Setenv("REPO", repo)
			// A folder of the script's own that no command can write.
			out, err := os.MkdirTemp(dir, "outside-")
			if err != nil {
				return err
			}
			env.Setenv("OUTSIDE", out)
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			return os.MkdirAll(filepath.Join(env.WorkDir, "home"), 0o755)
		},
	})
}
