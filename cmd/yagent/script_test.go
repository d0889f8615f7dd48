package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// pluginDir holds the plugins the scripts use, built from source by TestMain.
var pluginDir string

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"yagent": func() {
			if err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
				fmt.Fprintln(os.Stderr, "yagent:", err)
				os.Exit(exitCode(err))
			}
		},
	})
}

// TestScripts runs the CLI end to end over testdata/script/*.txtar, with
// the cognitive and hello plugins built from source in $PLUGINS.
func TestScripts(t *testing.T) {
	dir := t.TempDir()
	for name, pkg := range map[string]string{
		"yagent-plugin-cognitive": "../../plugins/cognitive",
		"yagent-plugin-hello":     "../../examples/hello",
	} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("build %s: %v\n%s", pkg, err, out)
		}
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("PLUGINS", dir)
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			return os.MkdirAll(filepath.Join(env.WorkDir, "home"), 0o755)
		},
	})
}
