package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// DefaultStateDir returns where yagent keeps per-session state:
// $YAGENT_STATE_DIR, else $XDG_STATE_HOME/yagent, else ~/.yagent/state.
func DefaultStateDir() (string, error) {
	if d := os.Getenv("YAGENT_STATE_DIR"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "yagent"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("state dir: %w", err)
	}
	return filepath.Join(home, ".yagent", "state"), nil
}

// sessionFolderName turns a session id into one path element: the id itself
// when it is plain, else a digest of it, so no id can climb out of the
// sessions folder.
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

// shellDir returns the session's shell folder, created private (0700 for
// every folder this call creates, and for the session and shell folders
// whatever they were).
func shellDir(stateDir, sessionID string) (string, error) {
	if stateDir == "" {
		return "", errors.New("shell state: no state folder configured")
	}
	session := filepath.Join(stateDir, "sessions", sessionFolderName(sessionID))
	dir := filepath.Join(session, "shell")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("shell state: %w", err)
	}
	for _, d := range []string{session, dir} {
		if err := os.Chmod(d, 0o700); err != nil {
			return "", fmt.Errorf("shell state: %w", err)
		}
	}
	return dir, nil
}
