package pluginmgr

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/yagent/yagent/internal/atomicfile"
	"github.com/yagent/yagent/internal/filestat"
	"github.com/yagent/yagent/internal/remote"
	"github.com/yagent/yagent/sdk"
)

// cacheFormat versions the files of the spec cache; a file of another
// format is ignored (and rewritten).
const cacheFormat = 1

// cachedDescription is one file of the spec cache: what a binary with this
// sha256 said about itself.
type cachedDescription struct {
	Format          int          `json:"format"`
	SHA256          string       `json:"sha256"`
	Name            string       `json:"name"`
	Version         string       `json:"version"`
	ProtocolVersion int          `json:"protocol_version"`
	Specs           []cachedSpec `json:"specs"`
}

// cachedSpec keeps the input schema as a string, byte for byte: a raw
// message would be compacted and re-escaped, and a warm start must list
// exactly what a cold one does.
type cachedSpec struct {
	sdk.Spec
	InputSchema string `json:"input_schema"`
}

var shaPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// loadSpecs returns the cached description of the binary with sum, if any.
func loadSpecs(dir, sum string) (remote.Description, bool) {
	if dir == "" || !shaPattern.MatchString(sum) {
		return remote.Description{}, false
	}
	b, err := os.ReadFile(filepath.Join(dir, sum+".json"))
	if err != nil {
		return remote.Description{}, false
	}
	var c cachedDescription
	if err := json.Unmarshal(b, &c); err != nil || c.Format != cacheFormat || c.SHA256 != sum || !slices.Contains(remote.ProtocolVersions, c.ProtocolVersion) {
		return remote.Description{}, false
	}
	d := remote.Description{Name: c.Name, Version: c.Version, ProtocolVersion: c.ProtocolVersion}
	for _, cs := range c.Specs {
		spec := cs.Spec
		spec.InputSchema = json.RawMessage(cs.InputSchema)
		d.Specs = append(d.Specs, spec)
	}
	return d, true
}

// storeSpecs writes d as the cached description of the binary with sum.
func storeSpecs(dir, sum string, d remote.Description) error {
	if dir == "" {
		return nil
	}
	c := cachedDescription{
		Format: cacheFormat, SHA256: sum, Name: d.Name, Version: d.Version,
		ProtocolVersion: d.ProtocolVersion,
	}
	for _, spec := range d.Specs {
		schema := string(spec.InputSchema)
		spec.InputSchema = nil
		c.Specs = append(c.Specs, cachedSpec{Spec: spec, InputSchema: schema})
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encode specs of %s: %w", d.Name, err)
	}
	return atomicfile.WriteFile(filepath.Join(dir, sum+".json"), b, 0o600)
}

// fileID identifies one version of a file without reading it. The mtime
// alone is not enough: anyone who can write the file can set it back
// (touch -d @old). The ctime cannot be set by any user: every write,
// chmod, link or rename of the inode moves it to now, so a file patched in
// place never matches its old identity and is hashed again.
type fileID struct {
	Inode   uint64 `json:"inode"`
	Size    int64  `json:"size"`
	MtimeNS int64  `json:"mtime_ns"`
	CtimeNS int64  `json:"ctime_ns"`
}

func statID(path string) (fileID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, err
	}
	_, ino, _ := filestat.Inode(fi)
	return fileID{Inode: ino, Size: fi.Size(), MtimeNS: fi.ModTime().UnixNano(), CtimeNS: filestat.Ctime(fi)}, nil
}

// memoizable says whether id is complete enough to key the sha index: a
// file whose inode or ctime is unknown is hashed on every start.
func (id fileID) memoizable() bool { return id.Inode != 0 && id.CtimeNS != 0 }

// racyWindow is how long after its last change a file is hashed on every
// start instead of being memoized.
const racyWindow = 2 * time.Second

// shaIndex memoizes binaries' sums by (path, inode, size, mtime, ctime), so
// a warm start hashes nothing. It is kept in the cache folder as
// index.json; entries written before ctime was recorded never match.
type shaIndex struct {
	Format  int                   `json:"format"`
	Entries map[string]indexEntry `json:"entries"`

	mu    sync.Mutex // sum runs for every plugin at once
	dirty bool
}

type indexEntry struct {
	fileID
	SHA256 string `json:"sha256"`
}

func loadIndex(dir string) *shaIndex {
	idx := &shaIndex{Format: cacheFormat, Entries: map[string]indexEntry{}}
	if dir == "" {
		return idx
	}
	b, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		return idx
	}
	var stored shaIndex
	if json.Unmarshal(b, &stored) == nil && stored.Format == cacheFormat && stored.Entries != nil {
		idx.Entries = stored.Entries
	}
	return idx
}

func (idx *shaIndex) save(dir string) error {
	if dir == "" || !idx.dirty {
		return nil
	}
	b, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, "index.json"), b, 0o600); err != nil {
		return err
	}
	idx.dirty = false
	return nil
}

// sum returns the sha256 of the binary at path and its identity, hashing
// only when the index has no entry for this very version of the file.
func (idx *shaIndex) sum(path string, hash func(string) (string, error), now func() time.Time) (string, fileID, error) {
	id, err := statID(path)
	if err != nil {
		return "", fileID{}, err
	}
	idx.mu.Lock()
	e, ok := idx.Entries[path]
	idx.mu.Unlock()
	if ok && e.fileID == id && id.memoizable() && shaPattern.MatchString(e.SHA256) {
		return e.SHA256, id, nil
	}
	s, err := hash(path)
	if err != nil {
		return "", fileID{}, err
	}
	// A file rewritten while it was hashed gets no entry: its next start
	// hashes again. So does a file changed in the last racyWindow: ctime
	// ticks coarsely, and a second change within the same tick would keep
	// the identity just recorded (git's "racy clean" problem).
	if after, err := statID(path); err == nil && after == id && id.memoizable() && now().Sub(time.Unix(0, id.CtimeNS)) >= racyWindow {
		idx.mu.Lock()
		idx.Entries[path] = indexEntry{fileID: id, SHA256: s}
		idx.dirty = true
		idx.mu.Unlock()
	}
	return s, id, nil
}

// hashWithID hashes the file at path with no memo, and returns the
// identity it had before, so a launch can tell that it changed since.
func hashWithID(path string, hash func(string) (string, error)) (string, fileID, error) {
	id, err := statID(path)
	if err != nil {
		return "", fileID{}, err
	}
	s, err := hash(path)
	if err != nil {
		return "", fileID{}, err
	}
	return s, id, nil
}
