package testbuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestGroups(t *testing.T) {
	ld := []string{"-ldflags", "-X main.x=1"}
	got := groups([]Target{
		{Pkg: "./cmd/yagent", Flags: ld},
		{Pkg: "./plugins/fs"},
		{Pkg: "./test/e2e/testplugin"},
		{Pkg: "./test/hostile/testplugin"}, // same binary name as the one before
		{Pkg: "./plugins/shell"},
	})
	var shape []string
	for _, g := range got {
		var pkgs []string
		for _, tg := range g {
			pkgs = append(pkgs, tg.Pkg)
		}
		shape = append(shape, strings.Join(pkgs, " "))
	}
	want := []string{
		"./cmd/yagent",
		"./plugins/fs ./test/e2e/testplugin ./plugins/shell",
		"./test/hostile/testplugin",
	}
	if strings.Join(shape, " | ") != strings.Join(want, " | ") {
		t.Errorf("groups:\n got %q\nwant %q", shape, want)
	}
}

// TestBuild builds two fixtures that share a package name into distinct
// outputs, and each runs as the program it is.
func TestBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	dir := t.TempDir()
	a := filepath.Join(dir, "a", "one")
	b := filepath.Join(dir, "b", "two")
	if err := Build(
		Target{Pkg: "./internal/testbuild/testdata/a/hello", Out: a},
		Target{Pkg: "./internal/testbuild/testdata/b/hello", Out: b},
	); err != nil {
		t.Fatal(err)
	}
	for bin, want := range map[string]string{a: "a", b: "b"} {
		out, err := exec.Command(bin).Output()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("%s: got %q, %v; want %q", bin, out, err, want)
		}
	}
}

func TestBuild_FailureNamesThePackage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	err := Build(Target{Pkg: "./internal/testbuild/testdata/broken", Out: filepath.Join(t.TempDir(), "x")})
	if err == nil || !strings.Contains(err.Error(), "testdata/broken") || !strings.Contains(err.Error(), "undefined") {
		t.Errorf("want go build's error naming the package, got %v", err)
	}
}

func TestRoot(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil || filepath.Base(filepath.Dir(root)) == "" {
		t.Errorf("root %q: %v", root, err)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "testbuild")); err != nil {
		t.Errorf("root %q does not hold internal/testbuild", root)
	}
}
