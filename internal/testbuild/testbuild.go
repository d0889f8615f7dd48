package testbuild

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/user"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/yagent/yagent/policy"
)

// Families are the first-party tool families, each built from its main
// package ./cmd/yagent-plugin-<family> (the family's code is under
// ./plugins/<family>) into yagent-plugin-<family>.
var Families = []string{"fs", "shell", "search", "browser", "cognitive"}

// Target is one binary to build.
type Target struct {
	// Pkg is the main package, relative to the module root ("./cmd/yagent").
	Pkg string
	// Out is the file the binary is written to; its folder is created.
	Out string
	// Flags are extra go build flags, such as -ldflags.
	Flags []string
}

// Host is the yagent binary, written to dir/yagent.
func Host(dir string, flags ...string) Target {
	return Target{Pkg: "./cmd/yagent", Out: filepath.Join(dir, "yagent"), Flags: flags}
}

// Plugin is a first-party family's plugin, written to
// dir/yagent-plugin-<family>.
func Plugin(dir, family string) Target {
	return Target{Pkg: pluginPkg + family, Out: filepath.Join(dir, "yagent-plugin-"+family)}
}

// Plugins are the plugins of the families named, or of every family when
// none is, all written to dir.
func Plugins(dir string, families ...string) []Target {
	if len(families) == 0 {
		families = Families
	}
	ts := make([]Target, len(families))
	for i, f := range families {
		ts[i] = Plugin(dir, f)
	}
	return ts
}

// Root is the module root: the nearest folder at or above the working
// directory that holds go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testbuild: no go.mod at or above the working directory")
		}
		dir = parent
	}
}

// hostPkg is the host's main package.
const hostPkg = "./cmd/yagent"

// pluginPkg starts the main package of each first-party family's plugin:
// ./cmd/yagent-plugin-<family>, named as the host looks for the binary.
const pluginPkg = "./cmd/yagent-plugin-"

// SumsVar is the host's variable that holds the sums of the plugins it was
// built with (pluginmgr.BuiltSumsVar), set with -ldflags -X as make build
// sets it.
const SumsVar = "github.com/yagent/yagent/host/pluginmgr.builtSums"

// Build compiles the targets from the module root. Targets with the same
// flags and distinct package names share one go build; the error names the
// package that failed and carries the compiler's output.
//
// As make build does, when the targets hold the host and first-party
// plugins, the plugins are built first and the host is linked with their
// sums (SumsVar, added to the host's own -ldflags), so it trusts them in a
// folder commands can write, as a release build trusts its own.
func Build(targets ...Target) error {
	root, err := Root()
	if err != nil {
		return err
	}
	var hosts, rest []Target
	for _, t := range targets {
		if cleanPkg(t.Pkg) == cleanPkg(hostPkg) {
			hosts = append(hosts, t)
		} else {
			rest = append(rest, t)
		}
	}
	if len(hosts) == 0 || !slices.ContainsFunc(rest, func(t Target) bool { return family(t.Pkg) != "" }) {
		hosts, rest = nil, targets
	}
	for _, g := range groups(rest) {
		if err := buildGroup(root, g); err != nil {
			return err
		}
	}
	if len(hosts) == 0 {
		return nil
	}
	sums, err := pluginSums(rest)
	if err != nil {
		return err
	}
	for i, h := range hosts {
		hosts[i].Flags = withLdflag(h.Flags, "-X "+SumsVar+"="+sums)
	}
	for _, g := range groups(hosts) {
		if err := buildGroup(root, g); err != nil {
			return err
		}
	}
	return nil
}

// cleanPkg is pkg without its leading ./ and trailing /.
func cleanPkg(pkg string) string {
	return strings.TrimPrefix(path.Clean(filepath.ToSlash(pkg)), "./")
}

// family is the first-party family pkg builds, "" when it builds none.
func family(pkg string) string {
	if f, ok := strings.CutPrefix(cleanPkg(pkg), cleanPkg(pluginPkg)); ok && slices.Contains(Families, f) {
		return f
	}
	return ""
}

// pluginSums is the value of SumsVar for the first-party plugins among the
// built targets: family:sha256, comma-separated, sorted.
func pluginSums(built []Target) (string, error) {
	sums := map[string]string{}
	for _, t := range built {
		f := family(t.Pkg)
		if f == "" {
			continue
		}
		sum, err := policy.SumFile(t.Out)
		if err != nil {
			return "", fmt.Errorf("testbuild: hash %s: %w", t.Out, err)
		}
		if prev, ok := sums[f]; ok && prev != sum {
			return "", fmt.Errorf("testbuild: two builds of %s differ; the host can be linked with the sum of one", t.Pkg)
		}
		sums[f] = sum
	}
	var list []string
	for _, f := range slices.Sorted(maps.Keys(sums)) {
		list = append(list, f+":"+sums[f])
	}
	return strings.Join(list, ","), nil
}

// SumsFlag returns the -X flag that links a program holding the host's
// packages with the sums of the first-party plugins in dir (those it
// holds), for a program built outside Build.
func SumsFlag(dir string) (string, error) {
	var built []Target
	for _, f := range Families {
		if _, err := os.Stat(filepath.Join(dir, "yagent-plugin-"+f)); err == nil {
			built = append(built, Plugin(dir, f))
		}
	}
	sums, err := pluginSums(built)
	if err != nil {
		return "", err
	}
	return "-X " + SumsVar + "=" + sums, nil
}

// withLdflag returns flags with flag added to their -ldflags: to the last
// one (go build heeds the last alone), or as a new one when there is none.
func withLdflag(flags []string, flag string) []string {
	out := slices.Clone(flags)
	for i := len(out) - 1; i >= 0; i-- {
		name, value, hasValue := strings.Cut(out[i], "=")
		if name != "-ldflags" && name != "--ldflags" {
			continue
		}
		switch {
		case hasValue:
			out[i] = name + "=" + strings.TrimSpace(value+" "+flag)
		case i+1 < len(out):
			out[i+1] = strings.TrimSpace(out[i+1] + " " + flag)
		default:
			out = append(out, flag)
		}
		return out
	}
	return append(out, "-ldflags", flag)
}

// groups splits the targets into go build invocations: one per set of
// flags, and a new one whenever two packages would write the same binary
// name into go build's output folder.
func groups(targets []Target) [][]Target {
	var out [][]Target
next:
	for _, t := range targets {
		for i, g := range out {
			if slices.Equal(g[0].Flags, t.Flags) && !slices.ContainsFunc(g, func(o Target) bool { return binName(o.Pkg) == binName(t.Pkg) }) {
				out[i] = append(g, t)
				continue next
			}
		}
		out = append(out, []Target{t})
	}
	return out
}

// binName is the file go build -o <dir>/ writes for a main package.
func binName(pkg string) string {
	return filepath.Base(filepath.FromSlash(strings.TrimSuffix(pkg, "/")))
}

func buildGroup(root string, g []Target) error {
	tmp, err := os.MkdirTemp("", "testbuild-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	args := append([]string{"build"}, g[0].Flags...)
	args = append(args, "-o", tmp+string(filepath.Separator))
	for _, t := range g {
		args = append(args, t.Pkg)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, t := range g {
		if err := place(filepath.Join(tmp, binName(t.Pkg)), t.Out); err != nil {
			return fmt.Errorf("testbuild: %s: %w", t.Pkg, err)
		}
	}
	return nil
}

// place moves a built binary to its target, copying when the two are on
// different filesystems.
func place(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	if err := os.Rename(from, to); err == nil {
		return nil
	}
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// BinDir makes a fresh folder, named prefix followed by random characters,
// for binaries a test's host launches as plugins, where no command could
// write: the host refuses a plugin in /tmp, /var/tmp, $TMPDIR or /dev/shm
// that nothing vouches for, and tests launch custom plugins no pin or
// build vouches for. It is made under os.UserCacheDir()/yagent-test, else
// under .testbin in the module root, else under the account's own cache
// folder (its home in the user database, for a $HOME pointed at a temp
// folder), else under /var/cache/yagent-test; the error says so when all
// are in a temp folder or cannot be made. The caller removes it.
func BinDir(prefix string) (string, error) {
	var candidates, tried []string
	if c, err := os.UserCacheDir(); err == nil {
		candidates = append(candidates, filepath.Join(c, "yagent-test"))
	}
	if root, err := Root(); err == nil {
		candidates = append(candidates, filepath.Join(root, ".testbin"))
	}
	if u, err := user.Current(); err == nil && u.HomeDir != "" {
		candidates = append(candidates, filepath.Join(u.HomeDir, ".cache", "yagent-test"))
	}
	candidates = append(candidates, "/var/cache/yagent-test")
	for _, c := range candidates {
		if tmp := inTempFolder(c); tmp != "" {
			tried = append(tried, c+" (in "+tmp+")")
			continue
		}
		if err := os.MkdirAll(c, 0o755); err != nil {
			tried = append(tried, fmt.Sprintf("%s (%v)", c, err))
			continue
		}
		return os.MkdirTemp(c, prefix)
	}
	return "", fmt.Errorf("testbuild: no folder for plugin binaries outside /tmp, /var/tmp, $TMPDIR and /dev/shm, "+
		"where the host would refuse the tests' unpinned plugins; tried %s: point XDG_CACHE_HOME (or HOME) elsewhere",
		strings.Join(tried, ", "))
}

// inTempFolder returns the temp folder path lies in (as named or
// resolved), "" when none.
func inTempFolder(p string) string {
	for _, tmp := range []string{"/tmp", "/var/tmp", os.Getenv("TMPDIR"), "/dev/shm"} {
		if tmp == "" || !filepath.IsAbs(tmp) {
			continue
		}
		for _, t := range []string{filepath.Clean(tmp), resolve(tmp)} {
			for _, q := range []string{filepath.Clean(p), resolve(p)} {
				if q == t || strings.HasPrefix(q, strings.TrimSuffix(t, "/")+"/") {
					return tmp
				}
			}
		}
	}
	return ""
}

// resolve resolves the links of path's nearest existing ancestor.
func resolve(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for cur := p; ; cur = filepath.Dir(cur) {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		if cur == filepath.Dir(cur) {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
	}
}
