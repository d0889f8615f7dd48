package pluginmgr

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/yagent/yagent/policy"
)

// builtSums is set when the host is linked, to the sha256 of each
// first-party plugin binary built with it: "fs:<sha256>,shell:<sha256>,...".
// make build sets it (-ldflags "-X <BuiltSumsVar>=..."), after building the
// plugins; a plain go build leaves it empty. It is read once, by BuiltSums.
var builtSums string

// BuiltSumsVar is the name the linker knows builtSums by, for -ldflags -X.
const BuiltSumsVar = "github.com/yagent/yagent/host/pluginmgr.builtSums"

// BuiltSums returns the sums of the plugin binaries this host was built
// with, by plugin name (Options.Built): empty when the build set none, and
// empty with an error when what it set does not parse.
func BuiltSums() (map[string]string, error) { return parsedBuiltSums() }

var parsedBuiltSums = sync.OnceValues(func() (map[string]string, error) { return ParseBuiltSums(builtSums) })

// ParseBuiltSums parses a list of name:sha256 pairs separated by commas,
// as builtSums holds. "" is no sums; a list with any entry that is not a
// plugin name and a lowercase hex sha256, or with a name twice, is refused
// whole: a build that vouches for something unreadable vouches for nothing.
func ParseBuiltSums(s string) (map[string]string, error) {
	sums := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return sums, nil
	}
	for entry := range strings.SplitSeq(s, ",") {
		name, sum, ok := strings.Cut(strings.TrimSpace(entry), ":")
		switch {
		case !ok || !ValidName(name) || !shaPattern.MatchString(sum):
			return map[string]string{}, fmt.Errorf("built plugin sums: %q is not name:sha256", entry)
		case sums[name] != "":
			return map[string]string{}, fmt.Errorf("built plugin sums: %s is named twice", name)
		}
		sums[name] = sum
	}
	return sums, nil
}

// UntrustedError refuses a plugin binary that a command could have written
// and that nothing vouches for: no pin of the user's or the admin's, not
// the binary the host was built with.
type UntrustedError struct {
	Name, Path string
	// Why says how a command could write it (Options.Writable's answer).
	Why string
	// Built holds the sums the host was built with (Options.Built).
	Built map[string]string
}

func (e *UntrustedError) Error() string {
	built := "not the binary this yagent was built with"
	switch _, named := e.Built[e.Name]; {
	case len(e.Built) == 0:
		built = "and this yagent was built without its plugins' sums (make build embeds them)"
	case !named:
		built = "not one of the plugins this yagent was built with"
	}
	return fmt.Sprintf("plugin %s refused: %s is in a folder commands can write (%s) and nothing vouches for it (not pinned, %s); "+
		"if you put it there, trust it with `yagent plugins pin %s`", e.Name, e.Path, e.Why, built, e.Name)
}

// IsUntrusted says whether err refuses a plugin as untrusted
// (*UntrustedError).
func IsUntrusted(err error) bool {
	var ue *UntrustedError
	return errors.As(err, &ue)
}

// WriteRoot is a folder commands can write, and how a message names it
// ("the workspace /ws", "/tmp").
type WriteRoot struct {
	Path string // absolute and clean
	Name string
}

// WritableIn returns a judgement for Options.Writable over the folders
// roots returns (called once, on the first judgement): why a command could
// write the file at path, "" when none can. A path is writable when it lies
// in a root (is the root or beneath it) as named or once resolved, or when
// a link on its way lives in a root: a command could point that link
// elsewhere. The judgement is safe for concurrent use.
func WritableIn(roots func() []WriteRoot) func(path string) string {
	once := sync.OnceValue(roots)
	return func(path string) string {
		rs := once()
		// in returns the innermost root p lies in: the workspace under
		// /tmp is named as the workspace.
		in := func(p string) (WriteRoot, bool) {
			var found WriteRoot
			for _, r := range rs {
				if policy.Within(r.Path, p, true) && len(r.Path) > len(found.Path) {
					found = r
				}
			}
			return found, found.Path != ""
		}
		path = filepath.Clean(path)
		if !filepath.IsAbs(path) {
			abs, err := filepath.Abs(path)
			if err != nil {
				return "its path " + path + " cannot be made absolute"
			}
			path = abs
		}
		if r, ok := in(path); ok {
			return "inside " + r.Name
		}
		// Resolved as the kernel will (policy.Resolve), each link on the
		// way seen in the folder that holds it.
		res, err := policy.Resolve(policy.OS, path, nil)
		for _, link := range res.Via {
			if r, ok := in(filepath.Dir(link)); ok {
				return fmt.Sprintf("reached through the link %s, which is inside %s", link, r.Name)
			}
		}
		var stop *policy.StopError
		switch {
		case errors.Is(err, policy.ErrLoop):
			return fmt.Sprintf("its path goes through more than %d links", policy.MaxLinks)
		case err != nil && !errors.As(err, &stop):
			return fmt.Sprintf("a link on its path cannot be read: %v", err)
		}
		if r, ok := in(res.Path); ok {
			return fmt.Sprintf("it resolves to %s, inside %s", res.Path, r.Name)
		}
		return ""
	}
}
