package runner

import (
	"github.com/yagent/yagent/sdk"

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

// shellDir returns the session's shell folder, created private (0700 for
// every folder this call creates, and for the session and shell folders
// whatever they were).
func shellDir(stateDir, sessionID string) (string, error) {
	if stateDir == "" {
		return "", errors.New("shell state: no state folder configured")
	}
	session := sdk.SessionDir(stateDir, sessionID)
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
