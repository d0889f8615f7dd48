package wsroot

import (
	"fmt"
	"path/filepath"
)

// New returns a Resolver of its own (the plugin shares roots through
// Roots.New) for a call whose workspace is the absolute folder
// workspace and whose approved external paths are approved. Close it when
// the call ends.
func New(workspace string, approved []string) (*Resolver, error) {
	if workspace == "" || !filepath.IsAbs(workspace) {
		return nil, fmt.Errorf("workspace root %q is not an absolute path", workspace)
	}
	ws := filepath.Clean(workspace)
	root, real, err := openWorkspace(ws)
	if err != nil {
		return nil, err
	}
	return newResolver(ws, real, approved, root), nil
}
