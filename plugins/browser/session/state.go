package session

import (
	"crypto/sha256"
	"encoding/hex"
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
	return filepath.Join(stateDir, "sessions", sessionFolderName(sessionID), "browser", stateFile)
}

// sessionFolderName turns a session id into one path element: the id
// itself when it is plain, else a digest of it, so no id can climb out of
// the sessions folder. The other plugins name session folders the same
// way, so a session's state sits in one folder.
func sessionFolderName(id string) string {
	if id == "" {
		return "default"
	}
	plain := len(id) <= 64 && id != "." && id != ".."
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			plain = false
			break
		}
	}
	if plain {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "s-" + hex.EncodeToString(sum[:12])
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
