package sdk

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
)

// SessionDir returns the folder that holds a session's state under
// stateDir (the plugin setting state_dir): stateDir/sessions/<name>, where
// name is the session id itself when it is a plain name, else a digest of
// it, so that no id can climb out of the sessions folder. Every plugin
// names session folders this way, so one session's state sits in one
// folder. It creates nothing.
func SessionDir(stateDir, sessionID string) string {
	return filepath.Join(stateDir, "sessions", sessionFolderName(sessionID))
}

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
