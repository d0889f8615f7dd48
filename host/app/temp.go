package app

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/yagent/yagent/call/guard"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/host/config"
	"github.com/yagent/yagent/internal/sessiontmp"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/sandbox"
)

// Each session gets a temp folder of its own (package sessiontmp). Where
// its commands run in a mount namespace (the sandbox on, mount namespaces
// here), the folder is bound over /tmp, /var/tmp and /dev/shm for them,
// and the file tools map those paths onto it (sdk.TempFolder.Over): a
// command and read_file see the same /tmp/a, and neither sees the
// machine's. Elsewhere the commands see the machine's /tmp, their TMPDIR
// is the session's folder, and the file tools take /tmp as it is.

// TempOver returns the machine's temp folders a session's own stands for
// under mode on a machine with layers l: none with the sandbox off or
// without mount namespaces; else each of /tmp, /var/tmp and /dev/shm that
// is a folder of its own name and holds none of keep (the workspace, the
// home folder, the roots the profile grants: a bind over it would hide
// them). notes say why a temp folder is left to the machine.
func TempOver(mode string, l sandbox.Layers, keep []string) (over, notes []string) {
	switch {
	case mode == policy.SandboxOff:
		return nil, []string{"the sandbox is off"}
	case !l.MountNS:
		return nil, []string{"there is no mount namespace here (" + l.Missing[sandbox.LayerMountNS] + ")"}
	}
	for _, root := range sdk.TempRoots() {
		fi, err := os.Lstat(root)
		if err != nil || !fi.IsDir() {
			notes = append(notes, root+" is not a folder of its own here")
			continue
		}
		i := slices.IndexFunc(keep, func(k string) bool { return k != "" && (k == root || strings.HasPrefix(k, root+"/")) })
		if i >= 0 {
			notes = append(notes, fmt.Sprintf("%s holds %s", root, keep[i]))
			continue
		}
		over = append(over, root)
	}
	return over, notes
}

// tempKeep are the folders a bind over a temp folder must not hide, each
// as named and resolved: the workspace, the home folders, the read roots
// and the profile's sandbox.read and sandbox.write, and the toolchain
// caches the environment names.
func tempKeep(ws, home string, roots []string, prof *config.Profile, env []string) []string {
	var keep []string
	add := func(p string) {
		if !filepath.IsAbs(p) {
			return
		}
		for _, q := range []string{filepath.Clean(p), resolved(p)} {
			if !slices.Contains(keep, q) {
				keep = append(keep, q)
			}
		}
	}
	for _, p := range slices.Concat([]string{ws, home}, roots, prof.Sandbox.Read, prof.Sandbox.Write) {
		add(p)
	}
	for _, name := range []string{"HOME", "GOCACHE", "GOMODCACHE", "GOPATH", "XDG_CACHE_HOME", "CARGO_HOME", "npm_config_cache", "PIP_CACHE_DIR"} {
		for _, p := range filepath.SplitList(lookupEnv(env, name)) {
			add(p)
		}
	}
	return keep
}

// TempLine says in one line what the sessions' temp folders are here, for
// doctor and serve's start line: over are TempOver's, notes its notes, root
// where the folders live ("" when none can be made: err says why).
func TempLine(over, notes []string, root string, err error) string {
	if err != nil {
		return fmt.Sprintf("no temp folder of their own for sessions (%v): commands share the machine's /tmp", err)
	}
	if len(over) == 0 {
		return fmt.Sprintf("each session's TMPDIR is a folder of its own under %s; its commands see the machine's /tmp, /var/tmp and /dev/shm (%s)", root, strings.Join(notes, "; "))
	}
	s := fmt.Sprintf("private %s per session: a folder of its own under %s, bound over them for its commands and mapped for the file tools, removed after the session and its last background command", strings.Join(over, ", "), root)
	if len(notes) > 0 {
		s += "; the machine's own: " + strings.Join(notes, "; ")
	}
	return s
}

// tempFor is the session's own temp folder, made on its first call; nil
// when the host keeps none.
func (a *App) tempFor(sess *session.Session) *sdk.TempFolder {
	if a.temps == nil {
		return nil
	}
	d, err := a.temps.Dir(sess.ID())
	if err != nil {
		a.logger.Warn("the session gets no temp folder of its own", "session", sess.ID(), "error", err)
		return nil
	}
	if t := sess.Temp(); t != nil && t.Dir == d {
		return t
	}
	return &sdk.TempFolder{Dir: d, Over: a.tempOver}
}

// openTemps decides which temp folders the sessions' own stand for, and
// opens them (sweeping what crashed hosts left), each of sizeMB MiB
// (sandbox.tmp_size_mb) where they stand for some: elsewhere the sandbox
// is off or commands see the machine's.
func (a *App) openTemps(mode string, sizeMB int, l sandbox.Layers, keep []string) {
	over, notes := TempOver(mode, l, keep)
	if len(over) == 0 {
		sizeMB = 0
	}
	var err error
	a.temps, err = sessiontmp.Open(sessiontmp.Options{Logger: a.logger, SizeMB: sizeMB})
	root := ""
	if err != nil {
		a.temps = nil
		a.Warnings = append(a.Warnings, fmt.Sprintf("sessions get no temp folder of their own, and their commands share the machine's /tmp: %v", err))
		notes = nil
	} else {
		root = a.temps.RootDir()
		a.tempOver = over
	}
	a.TempStatus = TempLine(a.tempOver, notes, root, err)
}

// tempRoot is where the sessions' temp folders live, "" when none can be
// made.
func (a *App) tempRoot() string {
	if a.temps == nil {
		return ""
	}
	return a.temps.RootDir()
}

// TempStatusOf is TempLine for the profile prof of opts on a machine with
// layers l, as Open would decide it, without opening anything (doctor).
func TempStatusOf(opts Options, prof *config.Profile, l sandbox.Layers) string {
	cfg, err := ConfigOptions(opts)
	if err != nil {
		return TempLine(nil, nil, "", err)
	}
	root, err := sessiontmp.Root()
	if err != nil {
		return TempLine(nil, nil, "", err)
	}
	g := guard.New(guard.Options{Workspace: cfg.Workspace, Home: cfg.Home, Policy: prof.Rules()})
	over, notes := TempOver(prof.SandboxMode(), l, tempKeep(cfg.Workspace, cfg.Home, g.ReadRoots(nil), prof, os.Environ()))
	return TempLine(over, notes, root, nil)
}
