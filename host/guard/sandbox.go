package guard

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/yagent/yagent/host/adapter"
	"github.com/yagent/yagent/host/session"
	"github.com/yagent/yagent/internal/atomicfile"
	"github.com/yagent/yagent/internal/filestat"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

var _ adapter.SandboxPolicy = (*WorkspaceGuard)(nil)

// ReadRoots returns the roots outside the workspace that sess may read
// without asking: the main checkout of a worktree, skill_dirs, read_paths
// and the session's approved paths (resolved).
func (g *WorkspaceGuard) ReadRoots(sess *session.Session) []string {
	out := slices.Clone(g.readRoots)
	if sess != nil {
		out = append(out, sess.ApprovedPaths()...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ExecPrograms returns the programs of the profile's ask and deny exec
// rules with the files each is on this machine, hashed. A file's hash is
// kept while its path, size, mtime and ctime stay the same, so a rule's
// program is hashed once, not per call; the whole list is kept while the
// folders searched and the files found are unchanged, so a call pays a
// stat per folder and per file, not one per folder and rule.
func (g *WorkspaceGuard) ExecPrograms() []sdk.ExecProgram {
	list, _ := g.rulePrograms()
	return list
}

// rulePrograms returns ExecPrograms' list and the rules' files for
// matchRules, kept while nothing they were found from changed.
func (g *WorkspaceGuard) rulePrograms() ([]sdk.ExecProgram, ruleFiles) {
	dirs := searchDirs()
	stamps := make([]stamp, len(dirs))
	for i, d := range dirs {
		stamps[i] = stampOf(d)
	}
	g.progs.mu.Lock()
	defer g.progs.mu.Unlock()
	if g.progs.valid(stamps) {
		return cloneProgs(g.progs.list), g.progs.rf
	}
	var out []sdk.ExecProgram
	var files []stamp
	rf := ruleFiles{}
	seen := map[string]bool{}
	for _, r := range g.rules {
		name := path.Base(r.Program)
		if r.Action == ExecAllow || seen[name] {
			continue
		}
		seen[name] = true
		p := sdk.ExecProgram{Name: name, Interactive: onlyInteractive(g.rules, name)}
		found := programFiles(name)
		rf[r.Program] = found // a rule's program is a base name, as filesOf keys it
		for _, f := range found {
			files = append(files, stampOf(f.path))
			if sum, ok := g.hashes.sum(f); ok {
				p.Files = append(p.Files, sdk.ProgramFile{Path: f.path, Size: f.fi.Size(), SHA256: sum})
			}
		}
		out = append(out, p)
	}
	g.progs.dirs, g.progs.files, g.progs.list, g.progs.rf, g.progs.built = stamps, files, out, rf, true
	g.progs.builds++
	g.hashes.save()
	return cloneProgs(out), rf
}

// onlyInteractive reports whether every ask and deny rule on the program
// name is an ask limited to its REPL.
func onlyInteractive(rules []ExecRule, name string) bool {
	for _, r := range rules {
		if path.Base(r.Program) == name && r.Action != ExecAllow && !(r.Action == ExecAsk && r.Interactive) {
			return false
		}
	}
	return true
}

// progCache is the last ExecPrograms list and what it was built from.
type progCache struct {
	mu          sync.Mutex
	built       bool
	dirs, files []stamp
	list        []sdk.ExecProgram
	rf          ruleFiles // never changed once built
	builds      int       // for tests
}

// valid says the folders searched are as they were (a file added, removed
// or renamed in one changes its mtime) and so is every file found.
func (c *progCache) valid(dirs []stamp) bool {
	if !c.built || !slices.Equal(c.dirs, dirs) {
		return false
	}
	for _, f := range c.files {
		if stampOf(f.path) != f {
			return false
		}
	}
	return true
}

// stamp is what a file's or folder's change shows in.
type stamp struct {
	path         string
	ok           bool
	size         int64
	mtime, ctime int64
}

func stampOf(p string) stamp {
	fi, err := os.Stat(p)
	if err != nil {
		return stamp{path: p}
	}
	return stamp{path: p, ok: true, size: fi.Size(), mtime: fi.ModTime().UnixNano(), ctime: filestat.Ctime(fi)}
}

// searchDirs are the folders programFiles searches, in its order.
func searchDirs() []string {
	var out []string
	for _, d := range slices.Concat(filepath.SplitList(hostPath()), ruleDirs) {
		if filepath.IsAbs(d) && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

func cloneProgs(ps []sdk.ExecProgram) []sdk.ExecProgram {
	out := slices.Clone(ps)
	for i := range out {
		out[i].Files = slices.Clone(out[i].Files)
	}
	return out
}

// Sandbox implements adapter.SandboxPolicy: the containment of one call's
// processes, from the profile and the session's grants now. Paths the
// guard allowed without asking may be read; of those an ask approved for
// this call (approved: by the user, a pass or -y), the ones the command
// writes are granted to writes (Sandbox.Granted) as grantWrite judges
// them, the others to reads (see grant.go). nil when the guard has no
// profile (the host sets no sandbox).
//
// The exec rules' programs go to a tool that takes a command (a
// RoleCommand parameter) alone: the exec rules judge commands, and finding
// and stamping every rule program's files on each read or edit was most of
// what such a call cost the host.
func (g *WorkspaceGuard) Sandbox(spec sdk.Spec, sess *session.Session, d adapter.Decision, approved bool) *sdk.Sandbox {
	if g.sandbox == nil {
		return nil
	}
	mode := g.sandbox.SandboxMode()
	if mode == policy.SandboxOff {
		return &sdk.Sandbox{Mode: sdk.SandboxOff}
	}
	rules := g.sandbox.Sandbox
	sb := &sdk.Sandbox{
		Mode:        mode,
		Network:     g.sandbox.SandboxNetwork(),
		Read:        slices.Concat(g.ReadRoots(sess), rules.Read),
		Write:       slices.Clone(rules.Write),
		Pids:        rules.Pids,
		MemoryMB:    rules.MemoryMB,
		TmpSizeMB:   rules.TmpSizeMB,
		UnixSockets: slices.Clone(rules.UnixSockets),
	}
	if takesCommand(spec) {
		sb.Programs = g.ExecPrograms()
	}
	switch {
	case d.Action == adapter.Ask && approved:
		write, read := g.grants(d)
		sb.Granted = write
		sb.Read = append(sb.Read, read...)
	case d.Action == adapter.Allow:
		_, read := g.grants(adapter.Decision{Paths: d.Paths})
		sb.Read = append(sb.Read, read...)
	}
	sb.Read, sb.Write, sb.Granted = sortedSet(sb.Read), sortedSet(sb.Write), sortedSet(sb.Granted)
	return sb
}

func sortedSet(s []string) []string {
	var out []string
	for _, p := range s {
		if p != "" {
			out = append(out, filepath.Clean(p))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// JudgeExec applies the profile's exec rules to a program a running
// command's tree is about to exec, as Check does to a simple command whose
// words are all static: the program is known by the basenames of program,
// of argv[0] and of each interpreter, and by their files (a path, a link
// or a byte-identical copy of a rule's program is that program). terminal
// false means stdin is fed, so an interactive rule does not match. An
// empty program (one that could not be identified) gets the strictest
// rule of the profile. It returns the action (ExecAllow, ExecAsk or
// ExecDeny) and, for ask and deny, the rule as a profile line says it.
func (g *WorkspaceGuard) JudgeExec(program string, argv, interpreters []string, terminal bool) (action, rule string) {
	return verdictText(g.judgeExec(program, argv, interpreters, terminal))
}

func verdictText(rv ruleVerdict) (action, rule string) {
	if rv.action == ExecAllow {
		return ExecAllow, ""
	}
	return rv.action, ruleText(rv.rule)
}

func (g *WorkspaceGuard) judgeExec(program string, argv, interpreters []string, terminal bool) ruleVerdict {
	if program == "" {
		for _, want := range []string{ExecDeny, ExecAsk} {
			for _, r := range g.rules {
				if r.Action == want {
					return ruleVerdict{action: want, rule: r}
				}
			}
		}
		return ruleVerdict{action: ExecAllow}
	}
	c := call{prog: path.Base(program), stdinFed: !terminal}
	addName := func(p string) {
		if n := path.Base(p); p != "" && n != c.prog && !slices.Contains(c.names, n) {
			c.names = append(c.names, n)
		}
	}
	if len(argv) > 0 {
		addName(argv[0])
		for _, a := range argv[1:] {
			c.args = append(c.args, arg{text: a, static: true})
		}
	}
	for _, f := range append([]string{program}, interpreters...) {
		addName(f)
		if pf, ok := statFile(f); ok {
			c.files = append(c.files, pf)
		}
	}
	_, rf := g.rulePrograms()
	return matchRules(g.rules, c, rf, false)
}

// JudgeExecIn is JudgeExec for an exec made in folder dir, with the
// read-only classifier of the command check: an ask rule on a program
// that only reads (cat, ls, grep, git status in a repository whose config
// runs no program) asked nothing when the command line was judged, and
// asks nothing when a script runs it either. Only a rule that names the
// program the exec runs is softened: a copy of another program under a
// reading program's name still asks.
func (g *WorkspaceGuard) JudgeExecIn(program string, argv, interpreters []string, terminal bool, dir string) (action, rule string) {
	rv := g.judgeExec(program, argv, interpreters, terminal)
	if rv.action == ExecAsk && g.readOnlyExec(program, argv, dir, rv.rule) {
		return ExecAllow, ""
	}
	return verdictText(rv)
}

func (g *WorkspaceGuard) readOnlyExec(program string, argv []string, dir string, r ExecRule) bool {
	name := path.Base(program)
	if program == "" || len(argv) == 0 || path.Base(r.Program) != name {
		return false
	}
	check, ok := readOnlyPrograms[name]
	if !ok || !check(argv[1:]) {
		return false
	}
	return name != "git" || filepath.IsAbs(dir) && gitRunsProgram(dir, g.home) == ""
}

// hashCache keeps the SHA-256 of rule programs' files by path, size,
// mtime and ctime. Safe for concurrent use. With a file it keeps them
// across starts too (node's binary alone is 99 MB: a start would hash it
// again otherwise): loaded on first use, saved when a build hashed
// something, with the sums of the files this process looked up alone.
type hashCache struct {
	mu   sync.Mutex
	sums map[hashKey]string
	// hashed counts the files read, for tests.
	hashed int

	file   string // "" = in memory only
	loaded bool
	used   map[hashKey]bool // looked up or hashed by this process
	dirty  bool
	now    func() time.Time
}

// hashKey names a file's content: by device and inode where the system
// says them (so /bin/x and /usr/bin/x through a /bin symlink are hashed
// once), else by path.
type hashKey struct {
	path         string
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

// racyWindow is how recently a file may have changed and still have its
// sum kept in the file: within it, a second change in the same clock tick
// could leave the ctime as it was.
const racyWindow = 2 * time.Second

func (h *hashCache) sum(f progFile) (string, bool) {
	k := hashKey{path: f.path, size: f.fi.Size(), mtime: f.fi.ModTime().UnixNano(), ctime: filestat.Ctime(f.fi)}
	if dev, ino, ok := filestat.Inode(f.fi); ok {
		k.path, k.dev, k.ino = "", dev, ino
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.load()
	if s, ok := h.sums[k]; ok {
		h.use(k)
		return s, true
	}
	s, err := hashFile(f.path)
	if err != nil {
		return "", false
	}
	if h.sums == nil {
		h.sums = map[hashKey]string{}
	}
	for old := range h.sums {
		if old.path == k.path && old.dev == k.dev && old.ino == k.ino {
			delete(h.sums, old) // the file changed: its old sum is stale
		}
	}
	h.sums[k] = s
	h.hashed++
	if k.persistable(h.now()) {
		h.use(k)
		h.dirty = true
	}
	return s, true
}

// persistable says whether k can key a sum kept across starts: a file
// whose identity is complete and that has not changed just now.
func (k hashKey) persistable(now time.Time) bool {
	return k.ino != 0 && k.ctime != 0 && now.Sub(time.Unix(0, k.ctime)) > racyWindow
}

func (h *hashCache) use(k hashKey) {
	if h.used == nil {
		h.used = map[hashKey]bool{}
	}
	h.used[k] = true
}

// savedSums is the file of a hashCache.
type savedSums struct {
	Format int        `json:"format"`
	Files  []savedSum `json:"files"`
}

type savedSum struct {
	Dev     uint64 `json:"dev"`
	Inode   uint64 `json:"inode"`
	Size    int64  `json:"size"`
	MtimeNS int64  `json:"mtime_ns"`
	CtimeNS int64  `json:"ctime_ns"`
	SHA256  string `json:"sha256"`
}

const savedSumsFormat = 1

// load reads the file once; a file that is missing, unreadable or of
// another format counts as empty.
func (h *hashCache) load() {
	if h.loaded || h.file == "" {
		return
	}
	h.loaded = true
	b, err := os.ReadFile(h.file)
	if err != nil {
		return
	}
	var saved savedSums
	if json.Unmarshal(b, &saved) != nil || saved.Format != savedSumsFormat {
		return
	}
	if h.sums == nil {
		h.sums = map[hashKey]string{}
	}
	for _, e := range saved.Files {
		k := hashKey{dev: e.Dev, ino: e.Inode, size: e.Size, mtime: e.MtimeNS, ctime: e.CtimeNS}
		if k.ino != 0 && k.ctime != 0 && validSum(e.SHA256) {
			h.sums[k] = e.SHA256
		}
	}
}

func validSum(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// save writes the sums this process used, if it hashed anything since
// the last save; a cache that cannot be written is left as it is.
func (h *hashCache) save() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.dirty || h.file == "" {
		return
	}
	h.dirty = false
	saved := savedSums{Format: savedSumsFormat}
	for k := range h.used {
		if s, ok := h.sums[k]; ok {
			saved.Files = append(saved.Files, savedSum{Dev: k.dev, Inode: k.ino, Size: k.size, MtimeNS: k.mtime, CtimeNS: k.ctime, SHA256: s})
		}
	}
	slices.SortFunc(saved.Files, func(a, b savedSum) int { return cmp.Or(cmp.Compare(a.Dev, b.Dev), cmp.Compare(a.Inode, b.Inode)) })
	if b, err := json.MarshalIndent(saved, "", "  "); err == nil {
		_ = atomicfile.WriteFile(h.file, b, 0o600)
	}
}

func hashFile(p string) (string, error) {
	fh, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", p, err)
	}
	defer fh.Close()
	hs := sha256.New()
	if _, err := io.Copy(hs, fh); err != nil {
		return "", fmt.Errorf("hash %s: %w", p, err)
	}
	return hex.EncodeToString(hs.Sum(nil)), nil
}

// takesCommand reports whether spec has a parameter of RoleCommand.
func takesCommand(spec sdk.Spec) bool {
	for _, r := range spec.Roles {
		if r == sdk.RoleCommand {
			return true
		}
	}
	return false
}
