package authz

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/yagent/yagent/internal/atomicfile"
)

// SettingsFile is the name of the user's settings file in ~/.yagent.
const SettingsFile = "settings.json"

// projectsKey is the settings key of the authorized projects.
const projectsKey = "authorized_projects"

// Projects is the project pass layer: the workspaces the user authorized
// for good, kept as authorized_projects in ~/.yagent/settings.json. The
// file is rewritten atomically (a temporary file renamed over it) with
// mode 0600, keeping the keys it does not own. Safe for concurrent use.
type Projects struct {
	path string

	mu  sync.Mutex
	set []string // sorted
}

// OpenProjects reads the authorized projects of the settings file at path;
// a missing file authorizes nothing.
func OpenProjects(path string) (*Projects, error) {
	p := &Projects{path: path}
	_, list, err := p.read()
	if err != nil {
		return nil, err
	}
	p.set = list
	return p, nil
}

// Path returns the settings file.
func (p *Projects) Path() string { return p.path }

// Authorized reports whether the user authorized the workspace ws.
func (p *Projects) Authorized(ws string) bool {
	if p == nil || ws == "" {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := slices.BinarySearch(p.set, filepath.Clean(ws))
	return ok
}

// Authorize adds ws to the authorized projects and saves the file,
// merging with what another host may have written meanwhile.
func (p *Projects) Authorize(ws string) error {
	ws = filepath.Clean(ws)
	p.mu.Lock()
	defer p.mu.Unlock()
	doc, list, err := p.read()
	if err != nil {
		return err
	}
	list = append(list, p.set...)
	list = append(list, ws)
	slices.Sort(list)
	list = slices.Compact(list)
	b, err := json.Marshal(list)
	if err != nil {
		return fmt.Errorf("encode %s: %w", projectsKey, err)
	}
	doc[projectsKey] = b
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encode settings: %w", err)
	}
	if err := writeAtomic(p.path, append(out, '\n')); err != nil {
		return err
	}
	p.set = list
	return nil
}

// read returns the settings document and its authorized projects, sorted.
func (p *Projects) read() (map[string]json.RawMessage, []string, error) {
	doc := map[string]json.RawMessage{}
	b, err := os.ReadFile(p.path)
	if errors.Is(err, fs.ErrNotExist) {
		return doc, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read settings: %w", err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, nil, fmt.Errorf("settings %s: %w", p.path, err)
	}
	var list []string
	if raw, ok := doc[projectsKey]; ok {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, nil, fmt.Errorf("settings %s: %s: %w", p.path, projectsKey, err)
		}
	}
	for i, w := range list {
		list[i] = filepath.Clean(w)
	}
	slices.Sort(list)
	return doc, slices.Compact(list), nil
}

// writeAtomic writes b to path through a private temporary file in the
// same folder, renamed over path: readers see the old file or the new one.
func writeAtomic(path string, b []byte) error {
	if err := atomicfile.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("write settings: %w", err)
	}
	return nil
}
