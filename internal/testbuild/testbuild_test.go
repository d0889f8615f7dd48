package testbuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/yagent/yagent/policy"
)

func TestGroups(t *testing.T) {
	ld := []string{"-ldflags", "-X main.x=1"}
	got := groups([]Target{
		{Pkg: "./cmd/yagent", Flags: ld},
		{Pkg: "./cmd/yagent-plugin-fs"},
		{Pkg: "./test/e2e/testplugin"},
		{Pkg: "./test/hostile/testplugin"}, // same binary name as the one before
		{Pkg: "./cmd/yagent-plugin-shell"},
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
		"./cmd/yagent-plugin-fs ./test/e2e/testplugin ./cmd/yagent-plugin-shell",
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

func TestWithLdflag(t *testing.T) {
	const x = "-X p.v=1"
	for _, c := range []struct {
		in, want []string
	}{
		{nil, []string{"-ldflags", x}},
		{[]string{"-race"}, []string{"-race", "-ldflags", x}},
		{[]string{"-ldflags", "-X a.b=c"}, []string{"-ldflags", "-X a.b=c " + x}},
		{[]string{"-ldflags=-s -w", "-race"}, []string{"-ldflags=-s -w " + x, "-race"}},
		{[]string{"--ldflags=-s"}, []string{"--ldflags=-s " + x}},
		// go build heeds the last -ldflags alone.
		{[]string{"-ldflags", "-s", "-ldflags", "-X a.b=c"}, []string{"-ldflags", "-s", "-ldflags", "-X a.b=c " + x}},
		{[]string{"-ldflags="}, []string{"-ldflags=" + x}},
	} {
		in := slices.Clone(c.in)
		if got := withLdflag(c.in, x); !slices.Equal(got, c.want) {
			t.Errorf("withLdflag(%q): got %q, want %q", c.in, got, c.want)
		}
		if !slices.Equal(in, c.in) {
			t.Errorf("withLdflag changed its argument: %q", c.in)
		}
	}
}

// TestBuild_HostLinkedWithPluginSums: a Build of the host and a
// first-party plugin links the host with the plugin's sum, added to the
// host's own -ldflags, as make build does.
func TestBuild_HostLinkedWithPluginSums(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the host")
	}
	dir := t.TempDir()
	plugin := Plugin(filepath.Join(dir, "plugins"), "cognitive")
	if err := Build(Host(dir, "-ldflags", "-X main.testSeam=on"), plugin,
		Target{Pkg: "./internal/testbuild/testdata/a/hello", Out: filepath.Join(dir, "hello")}); err != nil {
		t.Fatal(err)
	}
	sum, err := policy.SumFile(plugin.Out)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "version", "-m", filepath.Join(dir, "yagent")).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "-X main.testSeam=on -X " + SumsVar + "=cognitive:" + sum
	if !strings.Contains(string(out), want) {
		t.Errorf("the host's build settings lack %q:\n%s", want, out)
	}
	flag, err := SumsFlag(filepath.Join(dir, "plugins"))
	if err != nil || flag != "-X "+SumsVar+"=cognitive:"+sum {
		t.Errorf("SumsFlag = %q, %v; want the cognitive plugin's sum", flag, err)
	}
}

func TestPluginSums(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"a": "one", "b": "two", "c": "one"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	one, _ := policy.SumFile(filepath.Join(dir, "a"))
	two, _ := policy.SumFile(filepath.Join(dir, "b"))
	got, err := pluginSums([]Target{
		{Pkg: "./cmd/yagent-plugin-shell", Out: filepath.Join(dir, "b")},
		{Pkg: "./test/e2e/testplugin", Out: filepath.Join(dir, "b")},
		{Pkg: "cmd/yagent-plugin-fs/", Out: filepath.Join(dir, "a")},
		{Pkg: "./cmd/yagent-plugin-fs", Out: filepath.Join(dir, "c")}, // the same bytes elsewhere
	})
	if want := "fs:" + one + ",shell:" + two; err != nil || got != want {
		t.Errorf("pluginSums = %q, %v; want %q", got, err, want)
	}
	if _, err := pluginSums([]Target{{Pkg: "./cmd/yagent-plugin-fs", Out: filepath.Join(dir, "a")}, {Pkg: "./cmd/yagent-plugin-fs", Out: filepath.Join(dir, "b")}}); err == nil {
		t.Error("two different builds of one family: want an error")
	}
}

func TestBinDir(t *testing.T) {
	for p, want := range map[string]string{
		"/tmp": "/tmp", "/tmp/x/y": "/tmp", "/var/tmp/a": "/var/tmp", "/dev/shm/q": "/dev/shm",
		"/tmpx/a": "", "/root/.cache/yagent-test": "", "/var/tmpfoo": "",
	} {
		if got := inTempFolder(p); got != want && !(want != "" && got != "") {
			t.Errorf("inTempFolder(%s) = %q, want %q", p, got, want)
		}
	}
	dir, err := BinDir("testbuild-")
	if err != nil {
		t.Skipf("no folder outside the temp folders here: %v", err)
	}
	defer os.RemoveAll(dir)
	if tmp := inTempFolder(dir); tmp != "" {
		t.Errorf("BinDir gave %s, inside %s", dir, tmp)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || !strings.HasPrefix(filepath.Base(dir), "testbuild-") {
		t.Errorf("BinDir gave %s: %v", dir, err)
	}
}

// TestSumsScript: scripts/sums.sh, which make build links the host with,
// names the variable testbuild sets and gives the sums SumsFlag gives.
func TestSumsScript(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range []string{"fs", "shell"} {
		if err := os.WriteFile(filepath.Join(dir, "yagent-plugin-"+f), []byte("binary of "+f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command("sh", filepath.Join(root, "scripts", "sums.sh"), "--ldflags", dir).Output()
	if err != nil {
		t.Fatal(err)
	}
	want, err := SumsFlag(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("scripts/sums.sh --ldflags: got %q, want %q", got, want)
	}
}

// TestPlugin_MainPackages: each family's Plugin target is a main package
// whose binary go build and go install name yagent-plugin-<family>, the
// name the host looks for, and Build counts it as that family's.
func TestPlugin_MainPackages(t *testing.T) {
	var pkgs []string
	for _, f := range Families {
		p := Plugin(t.TempDir(), f)
		if got := binName(p.Pkg); got != "yagent-plugin-"+f {
			t.Errorf("Plugin(%s).Pkg = %s, built as %s; want yagent-plugin-%s", f, p.Pkg, got, f)
		}
		if got := family(p.Pkg); got != f {
			t.Errorf("family(%s) = %q, want %q", p.Pkg, got, f)
		}
		pkgs = append(pkgs, p.Pkg)
	}
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", append([]string{"list", "-f", "{{.ImportPath}} {{.Name}}"}, pkgs...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", pkgs, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(Families) {
		t.Fatalf("go list %v:\n%s\nwant one package a family", pkgs, out)
	}
	for _, l := range lines {
		if !strings.HasSuffix(l, " main") {
			t.Errorf("%s: not a main package", l)
		}
	}
}
