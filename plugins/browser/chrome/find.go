package chrome

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Candidates are the names looked up on PATH, in order, when no binary is
// configured.
var Candidates = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// launcherTargets maps launcher scripts (shell scripts that distributions
// install on PATH) to the binaries they exec, so the browser starts without
// a shell in between.
var launcherTargets = map[string][]string{
	"chromium":             {"/usr/lib/chromium/chromium"},
	"chromium-browser":     {"/usr/lib/chromium-browser/chromium-browser", "/usr/lib/chromium/chromium"},
	"google-chrome":        {"/opt/google/chrome/chrome"},
	"google-chrome-stable": {"/opt/google/chrome/chrome"},
}

// NotFoundError says that no browser binary could be found, and what to
// install.
type NotFoundError struct {
	// Configured is the binary the settings named, "" when none.
	Configured string
	// Searched are the names looked up on PATH.
	Searched []string
	// Err is why the configured binary cannot be used.
	Err error
}

func (e *NotFoundError) Error() string {
	if e.Configured != "" {
		return fmt.Sprintf("the browser %q set by the plugin setting %q cannot be used: %v; "+
			"install Chromium (Debian/Ubuntu: apt-get install chromium) or point %q at a Chromium or Chrome binary",
			e.Configured, SettingChromium, e.Err, SettingChromium)
	}
	return fmt.Sprintf("no Chromium found: looked for %s on PATH; "+
		"install Chromium (Debian/Ubuntu: apt-get install chromium) or set the browser plugin's %q setting to its path",
		strings.Join(e.Searched, ", "), SettingChromium)
}

func (e *NotFoundError) Unwrap() error { return e.Err }

// SettingChromium is the plugin setting (profile: plugins.browser.chromium)
// naming the browser binary, as a path or a name on PATH.
const SettingChromium = "chromium"

// Find returns the absolute path of the browser binary: configured when it
// is set (a path, or a name looked up on PATH), else the first of
// Candidates on PATH. A launcher script is replaced by the binary it runs
// when that binary is installed where its distribution puts it.
func Find(configured string) (string, error) {
	return find(configured, exec.LookPath)
}

func find(configured string, lookPath func(string) (string, error)) (string, error) {
	if configured = strings.TrimSpace(configured); configured != "" {
		p, err := lookPath(configured)
		if err != nil {
			return "", &NotFoundError{Configured: configured, Err: err}
		}
		return resolveLauncher(abs(p), filepath.Base(configured)), nil
	}
	for _, name := range Candidates {
		if p, err := lookPath(name); err == nil {
			return resolveLauncher(abs(p), name), nil
		}
	}
	return "", &NotFoundError{Searched: Candidates, Err: errors.New("not found")}
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// resolveLauncher returns the binary a launcher script at p runs, or p
// when p is not a script or its binary is not where it is expected.
func resolveLauncher(p, name string) string {
	if !isScript(p) {
		return p
	}
	for _, target := range launcherTargets[name] {
		if st, err := os.Stat(target); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 && !isScript(target) {
			return target
		}
	}
	return p
}

// isScript reports whether the file at p starts with "#!".
func isScript(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 2)
	if _, err := io.ReadFull(f, head); err != nil {
		return false
	}
	return bytes.Equal(head, []byte("#!"))
}
