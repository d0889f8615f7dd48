package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/yagent/yagent/policy"
)

// Access rights of Landlock path-beneath rules, with the kernel's values so
// the ruleset computed here is the one the kernel gets.
const (
	accessExecute     uint64 = 1 << 0
	accessWriteFile   uint64 = 1 << 1
	accessReadFile    uint64 = 1 << 2
	accessReadDir     uint64 = 1 << 3
	accessRemoveDir   uint64 = 1 << 4
	accessRemoveFile  uint64 = 1 << 5
	accessMakeChar    uint64 = 1 << 6
	accessMakeDir     uint64 = 1 << 7
	accessMakeReg     uint64 = 1 << 8
	accessMakeSock    uint64 = 1 << 9
	accessMakeFifo    uint64 = 1 << 10
	accessMakeBlock   uint64 = 1 << 11
	accessMakeSym     uint64 = 1 << 12
	accessRefer       uint64 = 1 << 13
	accessTruncate    uint64 = 1 << 14
	accessIoctlDev    uint64 = 1 << 15
	accessResolveUnix uint64 = 1 << 16
)

const (
	// rightsRead lets a tree be read and its programs run.
	rightsRead = accessReadFile | accessReadDir | accessExecute
	// rightsList lets a folder be listed, nothing beneath it read: /etc,
	// whose private files Landlock cannot except otherwise.
	rightsList = accessReadDir
	// rightsWrite adds everything that changes a tree; REFER so that mv
	// between two folders of the workspace works.
	rightsWrite = rightsRead | accessWriteFile | accessTruncate |
		accessRemoveDir | accessRemoveFile | accessMakeChar | accessMakeDir |
		accessMakeReg | accessMakeSock | accessMakeFifo | accessMakeBlock |
		accessMakeSym | accessRefer | accessResolveUnix
	// rightsChange are the rights that change what lies beneath a path.
	rightsChange = rightsWrite &^ rightsRead
	// rightsDevice is read, write and ioctl on the harmless devices.
	rightsDevice = accessReadFile | accessReadDir | accessWriteFile | accessTruncate | accessIoctlDev
	// rightsFile are the rights a rule on a file (not a folder) may carry.
	rightsFile = accessExecute | accessWriteFile | accessReadFile | accessTruncate | accessIoctlDev
)

// privateEntries are the folders whose entries are granted one by one, and
// which of their entries stay unreadable.
var privateEntries = map[string]func(name string) bool{
	"/etc": func(name string) bool {
		switch name {
		case "shadow", "shadow-", "gshadow", "gshadow-", "sudoers", "sudoers.d":
			return true
		}
		return false
	},
	"/etc/ssh": func(name string) bool { return strings.HasSuffix(name, "_key") },
	"/etc/ssl": func(name string) bool { return name == "private" },
}

// holdsPrivateEntries reports whether dir is or holds a folder whose
// entries are granted one by one: rights on it would reach the entries
// that stay private.
func holdsPrivateEntries(dir string) bool {
	for _, d := range listedDirs {
		if policy.Within(dir, d, true) {
			return true
		}
	}
	return false
}

// listedDirs are the keys of privateEntries, in order.
var listedDirs = []string{"/etc", "/etc/ssh", "/etc/ssl"}

// systemRights are the rights of each access in policy's system path
// table; the /dev entries it names are the only ones a command sees
// (stdin, stdout, stderr and fd are links into /proc, read anyway).
var systemRights = map[policy.SandboxAccess]uint64{
	policy.SandboxRead:       rightsRead,
	policy.SandboxList:       rightsList,
	policy.SandboxDevice:     rightsDevice,
	policy.SandboxDeviceRead: rightsRead &^ accessExecute,
	policy.SandboxShared:     rightsWrite,
}

// homeDefaults are the toolchain caches and config read under a home
// folder; the rest of the home stays private.
var homeDefaults = []string{
	".cache", "go", ".npm", ".cargo", ".rustup", ".pyenv", ".nvm", ".rbenv",
	".local/bin", ".local/lib", ".local/share/virtualenvs", ".gitconfig",
	".config/git", ".config/go", ".m2/repository", ".gradle/caches",
}

// rule grants Access beneath Path (resolved, absolute).
type rule struct {
	Path   string
	Access uint64
	// Linked marks the target of a symlink in a listed folder (an
	// /etc/resolv.conf into /run): it may be replaced while the folder
	// holding the link keeps its modification time.
	Linked bool
}

// ruleset is what one Policy lets its commands touch: the machine's rules
// (shared by every call while Gen holds) and the call's. A path may be in
// both; its rights are the union, as in the kernel.
type ruleset struct {
	Sys     []rule
	Gen     string
	Rules   []rule // sorted by Path, one per Path
	Widened []string
	// Unopened are write paths left closed, with why (Started.Unopened).
	Unopened []Unopened
}

// each yields the rules of both parts.
func (rs *ruleset) each() iter.Seq[rule] {
	return func(yield func(rule) bool) {
		for _, part := range [][]rule{rs.Sys, rs.Rules} {
			for _, r := range part {
				if !yield(r) {
					return
				}
			}
		}
	}
}

// Permits says whether the ruleset of p lets a command read (write false)
// or write path. A path that does not exist yet is judged by its nearest
// existing ancestor, as the kernel does when it is created.
func (p Policy) Permits(path string, write bool) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	return p.ruleset().permits(policy.ResolvePath(path), write)
}

// Roots are the paths the ruleset of p grants, each once, sorted: read are
// those that may be read (the private /etc files absent: its other entries
// are listed one by one), write those that may be written.
func (p Policy) Roots() (read, write []string) {
	for r := range p.ruleset().each() {
		if r.Access&(accessReadFile|accessReadDir) != 0 {
			read = append(read, r.Path)
		}
		if r.Access&accessWriteFile != 0 {
			write = append(write, r.Path)
		}
	}
	slices.Sort(read)
	slices.Sort(write)
	return slices.Compact(read), slices.Compact(write)
}

// WriteRoots are the paths the ruleset of p lets a command change (write,
// create, remove or rename beneath), resolved, each once, sorted: the
// call's part (the workspace, the temp folders, the toolchain caches,
// p.Write) and the machine's (/dev/shm, the writable devices). The host
// judges by it which plugin folders a command could have written, so host
// and sandbox decide by one ruleset.
func (p Policy) WriteRoots() []string {
	var out []string
	for r := range p.ruleset().each() {
		if r.Access&rightsChange != 0 {
			out = append(out, r.Path)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (rs *ruleset) permits(path string, write bool) bool {
	fi, err := os.Stat(path)
	exists := err == nil
	need := accessReadFile
	switch {
	case write && exists && !fi.IsDir():
		need = accessWriteFile
	case write:
		need = accessMakeReg
	case exists && fi.IsDir():
		need = accessReadDir
	}
	for r := range rs.each() {
		if policy.Within(r.Path, path, true) && r.Access&need != 0 {
			return true
		}
	}
	return false
}

// nearestExisting is the resolved nearest existing ancestor of path.
func nearestExisting(path string) string {
	for cur := filepath.Dir(filepath.Clean(path)); ; cur = filepath.Dir(cur) {
		if r, ok := policy.Existing(cur); ok {
			return r
		}
		if cur == "/" {
			return "/"
		}
	}
}

// builder gathers rules, one per path, their rights merged.
type builder struct {
	rules    map[string]rule
	widened  []string
	unopened []Unopened
	homes    []string
}

func (b *builder) add(path string, access uint64) {
	r := b.rules[path]
	r.Path, r.Access = path, r.Access|access
	b.rules[path] = r
}

// addChecked adds an existing path of a cache or home entry, unless it
// would open "/" or a whole home folder.
func (b *builder) addChecked(path string, access uint64) {
	r, ok := policy.Existing(path)
	if !ok || b.tooBroad(r) {
		return
	}
	b.add(r, access)
}

// tooBroad says granting path would grant "/", a home folder or an
// ancestor of one: what a toolchain variable or a home entry must never do.
func (b *builder) tooBroad(path string) bool {
	for _, h := range b.homes {
		if policy.Within(path, h, true) {
			return true
		}
	}
	return path == "/"
}

// ruleset computes the rules of p: the machine's part, cached, and the
// call's.
func (p Policy) ruleset() *ruleset {
	b := &builder{rules: map[string]rule{}, homes: homes(p.Env)}
	sys := systemRules()
	for _, h := range b.homes {
		for _, r := range homeRules(h) {
			b.add(r.Path, r.Access)
		}
	}
	for _, t := range []string{"/tmp", lookupEnv(p.Env, "TMPDIR")} {
		if t == p.Tmp {
			continue // below; a session's folder is not kept resolved for good
		}
		// A home under /tmp must not cost the temp folder, so only "/"
		// and a home itself are refused here.
		if r, ok := resolveStable(t); ok && r != "/" && !slices.Contains(b.homes, r) {
			b.add(r, rightsWrite)
		}
	}
	if t := filepath.Clean(p.Tmp); filepath.IsAbs(p.Tmp) && !b.tooBroad(t) {
		// The host made it and resolved it; its kernel rule opens it
		// (following nothing the host did not) and the ruleset's key
		// holds its identity.
		b.add(t, rightsWrite)
	}
	for _, c := range toolchainCaches(p) {
		if r, ok := resolveStable(c.path); ok && !b.tooBroad(r) {
			b.add(r, rightsWrite)
		}
	}
	for _, r := range p.Read {
		if rr, ok := policy.Existing(r); ok {
			b.add(rr, rightsRead)
		}
	}
	for _, w := range append([]string{p.Workspace}, p.Write...) {
		if w == "" || !filepath.IsAbs(w) {
			continue
		}
		if rw, ok := policy.Existing(w); ok {
			b.add(rw, rightsWrite)
			continue
		}
		anc := nearestExisting(w)
		if b.tooBroad(anc) || holdsPrivateEntries(anc) {
			// Opening it would open the private part of the home, or the
			// private files of /etc.
			b.unopened = append(b.unopened, Unopened{Path: w, Why: fmt.Sprintf("it does not exist yet, and %s, the folder it would be made in, holds private files (the home folder's, or those of /etc)", anc)})
			continue
		}
		b.widen(anc)
	}
	for _, g := range p.Granted {
		root, widened, why := JudgeGrant(g, b.homes)
		if why != "" {
			b.unopened = append(b.unopened, Unopened{Path: g, Why: why})
			continue
		}
		if widened {
			b.widen(root)
			continue
		}
		b.add(root, rightsWrite)
	}
	return &ruleset{Sys: sys.rules, Gen: sys.gen, Rules: b.sorted(), Widened: b.widened, Unopened: b.unopened}
}

// widen gives create rights on anc, the nearest existing folder of a write
// path that does not exist yet.
func (b *builder) widen(anc string) {
	b.add(anc, rightsWrite)
	if !slices.Contains(b.widened, anc) {
		b.widened = append(b.widened, anc)
	}
}

func (b *builder) sorted() []rule {
	rs := make([]rule, 0, len(b.rules))
	for _, r := range b.rules {
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b rule) int { return strings.Compare(a.Path, b.Path) })
	return rs
}

// sysRules are the rules of the machine's paths, valid while gen (the
// modification times of the folders listed entry by entry and of /dev)
// holds.
type sysRules struct {
	gen   string
	rules []rule
}

var sysCache struct {
	sync.Mutex
	v *sysRules
}

func systemGen() string {
	var b strings.Builder
	for _, d := range append(slices.Clone(listedDirs), "/dev") {
		if fi, err := os.Stat(d); err == nil {
			b.WriteString(d + ":" + strconv.FormatInt(fi.ModTime().UnixNano(), 10) + ";")
		}
	}
	return b.String()
}

func systemRules() *sysRules {
	gen := systemGen()
	sysCache.Lock()
	defer sysCache.Unlock()
	if sysCache.v != nil && sysCache.v.gen == gen {
		return sysCache.v
	}
	b := &builder{rules: map[string]rule{}, homes: homes(nil)}
	// The table's rows: /run and /var/run are listed only (what a command
	// sees there is the tmpfs over them); /dev/shm holds POSIX shared
	// memory and semaphores (python's multiprocessing), written by every
	// process like /tmp. /etc's entries are granted one by one.
	for _, sp := range policy.SystemPaths() {
		access, ok := systemRights[sp.Sandbox]
		if !ok || slices.Contains(listedDirs, sp.Path) {
			continue
		}
		if r, ok := policy.Existing(sp.Path); ok {
			b.add(r, access)
		}
	}
	for _, dir := range listedDirs {
		b.addEntries(dir, privateEntries[dir])
	}
	sysCache.v = &sysRules{gen: gen, rules: b.sorted()}
	return sysCache.v
}

// homeRules are the toolchain entries of home that exist, cached while
// the folders holding them keep their modification times.
func homeRules(home string) []rule {
	var gen strings.Builder
	for _, d := range []string{"", ".config", ".local", ".local/share", ".m2", ".gradle"} {
		if fi, err := os.Stat(filepath.Join(home, d)); err == nil {
			gen.WriteString(strconv.FormatInt(fi.ModTime().UnixNano(), 10))
		}
		gen.WriteByte(';')
	}
	if v, ok := homeCache.Load(home); ok && v.(homeEntries).gen == gen.String() {
		return v.(homeEntries).rules
	}
	b := &builder{rules: map[string]rule{}, homes: []string{home}}
	for _, name := range homeDefaults {
		b.addChecked(filepath.Join(home, name), rightsRead)
	}
	rs := b.sorted()
	homeCache.Store(home, homeEntries{gen.String(), rs})
	return rs
}

var homeCache sync.Map // home → homeEntries

type homeEntries struct {
	gen   string
	rules []rule
}

// addEntries lists dir and grants each entry but the private ones; the
// folder itself may only be listed. A nested folder of privateEntries is
// granted by its own pass.
func (b *builder) addEntries(dir string, private func(string) bool) {
	real, ok := policy.Existing(dir)
	if !ok {
		return
	}
	b.add(real, rightsList)
	for _, e := range listDir(real) {
		p := filepath.Join(real, e.Name())
		if private(e.Name()) || privateEntries[p] != nil {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			t, ok := policy.Existing(p)
			if !ok || b.tooBroad(t) || isPrivate(t) {
				continue
			}
			b.add(t, rightsRead)
			r := b.rules[t]
			r.Linked = !policy.Within(real, t, true)
			b.rules[t] = r
			continue
		}
		b.add(p, rightsRead)
	}
}

// isPrivate says a resolved path is one of the private entries or lies
// beneath one (a link to /etc/ssl/private/key.pem).
func isPrivate(path string) bool {
	for cur := path; cur != "/" && cur != "."; cur = filepath.Dir(cur) {
		if private := privateEntries[filepath.Dir(cur)]; private != nil && private(filepath.Base(cur)) {
			return true
		}
	}
	return false
}

// dirCache keeps a folder's listing while its modification time holds:
// /etc is listed for every command.
var dirCache sync.Map // path → dirListing

type dirListing struct {
	mtime   time.Time
	entries []fs.DirEntry
}

func listDir(dir string) []fs.DirEntry {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil
	}
	if v, ok := dirCache.Load(dir); ok && v.(dirListing).mtime.Equal(fi.ModTime()) {
		return v.(dirListing).entries
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	dirCache.Store(dir, dirListing{fi.ModTime(), entries})
	return entries
}

// lookupEnv is the value of name in env, the last one winning as in
// os/exec.
func lookupEnv(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

var accountHome = sync.OnceValue(func() string {
	if u, err := user.Current(); err == nil {
		return u.HomeDir
	}
	return ""
})

// homes are the home folders whose toolchain entries are read: $HOME of
// the command and the account's home in the password database.
func homes(env []string) []string {
	var hs []string
	for _, h := range []string{lookupEnv(env, "HOME"), accountHome()} {
		if r, ok := resolveStable(h); ok && r != "/" && !slices.Contains(hs, r) {
			hs = append(hs, r)
		}
	}
	return hs
}

var resolvedStable sync.Map // path as given → resolved

// resolveStable resolves a path of the environment (a home, the temp
// folder, a toolchain cache) once it exists: such paths do not move while
// yagent runs. One removed since is skipped when its rule is made.
func resolveStable(path string) (string, bool) {
	if v, ok := resolvedStable.Load(path); ok {
		return v.(string), true
	}
	r, ok := policy.Existing(path)
	if ok {
		resolvedStable.Store(path, r)
	}
	return r, ok
}

// cache is a toolchain cache the commands write.
type cache struct {
	path string
	// tool says the toolchain is installed, so a missing cache folder is
	// created before the command runs (a cold cache must work, and
	// widening its ancestor would open the home folder).
	tool bool
}

// toolchainCaches are the write caches of p's environment, computed once
// per environment.
func toolchainCaches(p Policy) []cache {
	return goEnv(p).caches
}

// cachesOf computes the write caches of env from what its toolchains said.
func cachesOf(env []string, tc toolchain) []cache {
	home := lookupEnv(env, "HOME")
	join := func(base string, elem ...string) string {
		if base == "" || !filepath.IsAbs(base) {
			return ""
		}
		return filepath.Join(append([]string{base}, elem...)...)
	}
	or := func(v, def string) string {
		if v != "" {
			return v
		}
		return def
	}
	xdg := or(lookupEnv(env, "XDG_CACHE_HOME"), join(home, ".cache"))
	cargo := or(lookupEnv(env, "CARGO_HOME"), join(home, ".cargo"))
	npm := or(lookupEnv(env, "npm_config_cache"), or(lookupEnv(env, "NPM_CONFIG_CACHE"), join(home, ".npm")))
	tools := tc.tools
	cs := []cache{
		{tc.gocache, tc.goFound}, {tc.gomodcache, tc.goFound}, {tc.gosumdb, tc.goFound},
		{npm, tools["npm"]},
		{or(lookupEnv(env, "PIP_CACHE_DIR"), join(xdg, "pip")), tools["pip"]},
		{join(cargo, "registry"), tools["cargo"]}, {join(cargo, "git"), tools["cargo"]},
	}
	return slices.DeleteFunc(cs, func(c cache) bool { return c.path == "" || !filepath.IsAbs(c.path) })
}

// toolchain is what one environment's toolchains say about their caches.
type toolchain struct {
	gocache, gomodcache string
	// gosumdb is $GOPATH/pkg/sumdb, where go keeps the checksum
	// database's latest tree: a first download writes it.
	gosumdb string
	goFound bool
	tools   map[string]bool
	caches  []cache
}

var toolchains sync.Map // environment key → toolchain

// goEnv asks go (found on the environment's PATH outside every folder the
// commands may write) where its caches are, once per environment; without
// go it uses Go's own defaults.
func goEnv(p Policy) toolchain {
	writable := slices.Concat(p.Write, p.Granted)
	key := toolchainKey(p.Env) + "\x01" + p.Workspace + "\x01" + strings.Join(writable, "\x00")
	if v, ok := toolchains.Load(key); ok {
		return v.(toolchain)
	}
	tc := toolchain{tools: map[string]bool{}}
	untrusted := append([]string{p.Workspace, "/tmp", lookupEnv(p.Env, "TMPDIR"), p.Tmp}, writable...)
	look := func(name string) string {
		for _, dir := range filepath.SplitList(lookupEnv(p.Env, "PATH")) {
			if !filepath.IsAbs(dir) || slices.ContainsFunc(untrusted, func(u string) bool {
				return u != "" && policy.Within(policy.ResolvePath(u), policy.ResolvePath(dir), true)
			}) {
				continue
			}
			f := filepath.Join(dir, name)
			if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return f
			}
		}
		return ""
	}
	for _, t := range []string{"npm", "cargo"} {
		tc.tools[t] = look(t) != ""
	}
	tc.tools["pip"] = look("pip") != "" || look("pip3") != ""
	if gobin := look("go"); gobin != "" {
		tc.goFound = true
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, gobin, "env", "-json", "GOCACHE", "GOMODCACHE", "GOPATH")
		// "/" holds no go.mod a command could plant; GOTOOLCHAIN=local so
		// no toolchain is fetched to answer.
		cmd.Dir = "/"
		cmd.Env = append(slices.Clone(p.Env), "GOTOOLCHAIN=local")
		out, err := cmd.Output()
		cancel()
		var v struct{ GOCACHE, GOMODCACHE, GOPATH string }
		if err == nil && json.Unmarshal(out, &v) == nil {
			tc.gocache, tc.gomodcache = v.GOCACHE, v.GOMODCACHE
			if gp := filepath.SplitList(v.GOPATH); len(gp) > 0 && filepath.IsAbs(gp[0]) {
				tc.gosumdb = filepath.Join(gp[0], "pkg", "sumdb")
			}
		}
	}
	if tc.gocache == "" || tc.gomodcache == "" || tc.gosumdb == "" {
		def := goDefaults(p.Env)
		tc.gocache = cmpOr(tc.gocache, def.gocache)
		tc.gomodcache = cmpOr(tc.gomodcache, def.gomodcache)
		tc.gosumdb = cmpOr(tc.gosumdb, def.gosumdb)
	}
	tc.caches = cachesOf(p.Env, tc)
	toolchains.Store(key, tc)
	return tc
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// toolchainKey is the part of env the toolchains' caches depend on, so a
// variable that changes per call does not ask go env again.
func toolchainKey(env []string) string {
	var b strings.Builder
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "GO"), strings.HasPrefix(name, "XDG_"), strings.HasPrefix(name, "CARGO_"),
			strings.EqualFold(name, "npm_config_cache"), name == "PIP_CACHE_DIR", name == "PATH", name == "HOME", name == "TMPDIR":
			b.WriteString(kv)
			b.WriteByte(0)
		}
	}
	return b.String()
}

// goDefaults are Go's own defaults for its caches.
func goDefaults(env []string) toolchain {
	home := lookupEnv(env, "HOME")
	tc := toolchain{gocache: lookupEnv(env, "GOCACHE"), gomodcache: lookupEnv(env, "GOMODCACHE")}
	if tc.gocache == "" {
		if x := lookupEnv(env, "XDG_CACHE_HOME"); filepath.IsAbs(x) {
			tc.gocache = filepath.Join(x, "go-build")
		} else if filepath.IsAbs(home) {
			tc.gocache = filepath.Join(home, ".cache", "go-build")
		}
	}
	gopath := ""
	if gp := filepath.SplitList(lookupEnv(env, "GOPATH")); len(gp) > 0 && filepath.IsAbs(gp[0]) {
		gopath = gp[0]
	} else if filepath.IsAbs(home) {
		gopath = filepath.Join(home, "go")
	}
	if tc.gomodcache == "" && gopath != "" {
		tc.gomodcache = filepath.Join(gopath, "pkg", "mod")
	}
	if gopath != "" {
		tc.gosumdb = filepath.Join(gopath, "pkg", "sumdb")
	}
	if tc.gocache == "off" {
		tc.gocache = ""
	}
	return tc
}
