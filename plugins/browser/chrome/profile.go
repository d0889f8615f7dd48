package chrome

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// profilePrefix starts the name of every profile folder; the plugin's pid
// follows, so folders left by a plugin that was killed can be told apart.
const profilePrefix = "yagent-browser-"

// NewProfileDir creates a fresh, private profile folder under parent (the
// system's temporary folder when parent is "").
func NewProfileDir(parent string) (string, error) {
	dir, err := os.MkdirTemp(parent, fmt.Sprintf("%s%d-", profilePrefix, os.Getpid()))
	if err != nil {
		return "", fmt.Errorf("chrome: profile folder: %w", err)
	}
	return dir, nil
}

// SweepProfiles removes the profile folders under parent (the system's
// temporary folder when "") left by plugins that are no longer running,
// such as one killed with SIGKILL. It returns how many it removed.
func SweepProfiles(parent string) int {
	if parent == "" {
		parent = os.TempDir()
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), profilePrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || alive(pid) {
			continue
		}
		if os.RemoveAll(filepath.Join(parent, e.Name())) == nil {
			n++
		}
	}
	return n
}
