package session

import (
	"github.com/yagent/yagent/sdk"

	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// savedTabs is what the session folder keeps: the open tabs in order and
// the current one.
type savedTabs struct {
	Tabs    []savedTab `json:"tabs"`
	Current int        `json:"current"`
}

type savedTab struct {
	URL   string `json:"url"`
	Title string `json:"title,omitempty"`
}

// stateFile is the tabs file inside the session's browser folder.
const stateFile = "tabs.json"

// statePath returns the session's tabs file under stateDir, "" when there
// is no state folder.
func statePath(stateDir, sessionID string) string {
	if stateDir == "" {
		return ""
	}
	return filepath.Join(sdk.SessionDir(stateDir, sessionID), "browser", stateFile)
}

// loadTabs reads the tabs file at path; no file is no tabs.
func loadTabs(path string) (savedTabs, error) {
	var st savedTabs
	if path == "" {
		return st, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read browser tabs: %w", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return savedTabs{}, fmt.Errorf("read browser tabs %s: %w", path, err)
	}
	if st.Current < 0 || st.Current >= len(st.Tabs) {
		st.Current = 0
	}
	return st, nil
}

// saveTabs writes st to path atomically, private to the user: folders
// 0700, the file 0600.
func saveTabs(path string, st savedTabs) error {
	if path == "" {
		return nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("save browser tabs: %w", err)
	}
	// The session folder may have been created by another plugin with a
	// looser mode; the browser's own folder and the session's are private.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o700); err != nil {
			return fmt.Errorf("save browser tabs: %w", err)
		}
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("save browser tabs: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".tabs-*.json")
	if err != nil {
		return fmt.Errorf("save browser tabs: %w", err)
	}
	name := tmp.Name()
	_, werr := tmp.Write(append(b, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(name, 0o600)); err != nil {
		os.Remove(name)
		return fmt.Errorf("save browser tabs: %w", err)
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return fmt.Errorf("save browser tabs: %w", err)
	}
	return nil
}

// removeTabs deletes the tabs file: a closed browser reopens nothing.
func removeTabs(path string) error {
	if path == "" {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove browser tabs: %w", err)
	}
	return nil
}
