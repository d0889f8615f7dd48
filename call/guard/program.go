package guard

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"mvdan.cc/sh/v3/syntax"

	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// Bounds of what the guard reads from the disk to judge one command.
const (
	maxScriptBytes = 1 << 20 // a script file a shell runs
	maxCwds        = 16      // folders cd may have moved to
	maxGlobMatches = 1024    // matches of one glob judged one by one
)

// defaultPath is searched when the host has no PATH, like bash's default.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// ruleDirs are searched for a rule's program besides the host's PATH, so a
// rule names the same file whatever PATH the host started with.
var ruleDirs = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

func hostPath() string {
	if p := os.Getenv("PATH"); p != "" {
		return p
	}
	return defaultPath
}

// joinRaw joins a folder and a relative name as the kernel will see them:
// no cleaning, so "e/.." is resolved after the symlink e.
func joinRaw(dir, name string) string {
	if name == "" {
		return dir
	}
	return strings.TrimSuffix(dir, "/") + "/" + name
}

// programFiles returns the files a rule's program name resolves to: every
// executable of that name in the host's PATH and the system folders.
func programFiles(name string) []policy.ExecFile {
	var out []policy.ExecFile
	dirs := slices.Concat(filepath.SplitList(hostPath()), ruleDirs)
	seen := map[string]bool{}
	for _, d := range dirs {
		if !filepath.IsAbs(d) || seen[d] {
			continue
		}
		seen[d] = true
		if f, ok := policy.StatExecFile(filepath.Join(d, name)); ok {
			out = append(out, f)
		}
	}
	return out
}

// candidates returns where name may be on the disk: itself when absolute,
// else joined to each folder the command may be in.
func (a *analyzer) candidates(name string) []string {
	if filepath.IsAbs(name) {
		return []string{name}
	}
	out := make([]string, 0, len(a.cwds))
	for _, c := range a.cwds {
		out = append(out, joinRaw(c, name))
	}
	return out
}

// identify finds the files the program word of c may run: a word with a
// slash names a file (a script's shebang adds its interpreter, and a shell
// script is read for its programs); a bare name is looked up as hash -p
// bound it, else in the command's PATH.
func (a *analyzer) identify(c *call, word string, depth int) {
	if strings.Contains(word, "/") {
		for _, p := range a.candidates(word) {
			f, ok := policy.StatExecFile(p)
			if !ok {
				continue
			}
			c.files = append(c.files, f)
			a.shebang(c, p, depth)
		}
		return
	}
	if h, ok := a.hashed[word]; ok {
		c.names = append(c.names, path.Base(h))
		for _, p := range a.candidates(h) {
			if f, ok := policy.StatExecFile(p); ok {
				c.files = append(c.files, f)
			}
		}
		return
	}
	for _, d := range a.pathDirs {
		dirs := []string{d}
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) {
			dirs = a.candidates(d)
		}
		for _, dir := range dirs {
			f, ok := policy.StatExecFile(joinRaw(dir, word))
			if ok && f.Info.Mode()&0o111 != 0 {
				c.files = append(c.files, f)
				return
			}
		}
	}
}

// shebang adds the interpreter a script file p names on its #! line to c,
// and reads a shell script for the programs it runs.
func (a *analyzer) shebang(c *call, p string, depth int) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return
	}
	line, err := bufio.NewReader(io.LimitReader(f, 512)).ReadString('\n')
	if err != nil && err != io.EOF || !strings.HasPrefix(line, "#!") {
		return
	}
	fields := strings.Fields(line[2:])
	if len(fields) == 0 {
		return
	}
	interp := fields[0]
	c.names = append(c.names, path.Base(interp))
	if f, ok := policy.StatExecFile(interp); ok {
		c.files = append(c.files, f)
	}
	if path.Base(interp) == "env" {
		for _, w := range fields[1:] {
			if !strings.HasPrefix(w, "-") {
				interp = w
				c.names = append(c.names, path.Base(w))
				break
			}
		}
	}
	if policy.IsShell(interp) {
		a.scriptFile(arg{text: p, static: true}, path.Base(interp), depth, true)
	}
}

// scriptFile reads the script a shell runs from a file (bash s.sh, source
// s.sh, ./s.sh) and walks it for its programs. A script that cannot be
// read could run anything: under a deny rule it is refused.
func (a *analyzer) scriptFile(w arg, prog string, depth int, newProcess bool) {
	if !w.static {
		a.strictf("the script %s runs is only known when the command runs", prog)
		return
	}
	if depth+1 > maxScriptDepth {
		a.strictf("scripts are nested more than %d deep", maxScriptDepth)
		return
	}
	names := a.candidates(w.text)
	if prog == "source" && !strings.Contains(w.text, "/") {
		for _, d := range a.pathDirs {
			if filepath.IsAbs(d) {
				names = append(names, joinRaw(d, w.text))
			}
		}
	}
	read := false
	for _, n := range names {
		if a.scriptReads++; a.scriptReads > maxScriptReads {
			a.strictf("the command runs more than %d script files", maxScriptReads)
			return
		}
		b, err := readScript(n)
		if err != nil {
			continue
		}
		read = true
		f, err := parse(string(b))
		if be := (*boundError)(nil); errors.As(err, &be) {
			a.strictf("the script %s that %s runs %s", w.text, prog, be)
			continue
		}
		if err != nil {
			a.strictf("the script %s that %s runs does not parse: %v", w.text, prog, err)
			continue
		}
		cwds, unknown := a.cwds, a.cwdUnknown
		a.scriptFiles++
		a.walk(f, depth+1)
		a.scriptFiles--
		if newProcess {
			a.cwds, a.cwdUnknown = cwds, unknown
		}
	}
	if !read {
		a.strictf("the script %s that %s runs cannot be read before it runs", w.text, prog)
	}
}

// maxScriptReads bounds the script files one command may read, however
// they source each other.
const maxScriptReads = 64

func readScript(p string) ([]byte, error) {
	b, err := readRegular(p, maxScriptBytes)
	if err != nil {
		return nil, err
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return nil, fmt.Errorf("%s is not a text file", p)
	}
	return b, nil
}

// readRegular reads the regular file p, at most limit bytes. A FIFO or a
// device is refused before it is opened, and the open does not block, so
// a file the workspace planted cannot stall the guard.
func readRegular(p string, limit int64) ([]byte, error) {
	if fi, err := os.Stat(p); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", p, limit)
	}
	return b, nil
}

// strictf records a reason that only matters under a deny rule: what the
// guard cannot see could be the denied program.
func (a *analyzer) strictf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !slices.Contains(a.s.strict, msg) {
		a.s.strict = append(a.s.strict, msg)
	}
}

// setPath takes the command's PATH from an assignment.
func (a *analyzer) setPath(w *syntax.Word) {
	if w == nil {
		a.pathDirs = []string{""}
		return
	}
	// The parts only known at run time are left out: a program is looked
	// up in the folders the guard can know (its name still matches).
	v := a.render(w)
	var dirs []string
	for _, d := range filepath.SplitList(v.text) {
		if !strings.Contains(d, unknownMark) {
			dirs = append(dirs, d)
		}
	}
	if v.text == "" {
		dirs = []string{""}
	}
	a.pathDirs = dirs
	if v.static {
		a.env["PATH"] = v.text
	} else {
		delete(a.env, "PATH")
	}
}

// copyPrograms copy, link or move the files they name: a denied program's
// file among them is the program run under another name.
var copyPrograms = map[string]bool{
	"cp": true, "ln": true, "link": true, "mv": true, "install": true, "rsync": true,
	"cat": true, "dd": true, "tee": true, "head": true, "tail": true, "tac": true,
	"base64": true, "xxd": true, "gzip": true, "bzip2": true, "xz": true, "zstd": true,
	"tar": true, "cpio": true, "split": true, "objcopy": true, "strip": true, "sed": true,
}

// copyNames are the copy programs whose source only known at run time
// could be a denied program: their whole job is to place a file.
var copyNames = map[string]bool{"cp": true, "ln": true, "link": true, "mv": true, "install": true, "rsync": true}

// copies records the files prog copies.
func (a *analyzer) copies(prog string, args []arg) {
	if !copyPrograms[prog] {
		return
	}
	for _, w := range args {
		if !w.static {
			if copyNames[prog] {
				a.strictf("%s copies a file only known when the command runs, which could be a program the rules name", prog)
			}
			continue
		}
		t := w.text
		if v, ok := strings.CutPrefix(t, "if="); ok {
			t = v
		} else if _, v, ok := strings.Cut(t, "="); ok && strings.HasPrefix(t, "--") {
			t = v
		}
		if strings.HasPrefix(t, "-") || t == "" {
			continue
		}
		a.copiedFile(t, w.glob)
	}
}

func (a *analyzer) copiedFile(t string, glob bool) {
	for _, p := range a.candidates(t) {
		if glob {
			a.s.copied = append(a.s.copied, expandGlob(p, a.globs)...)
			continue
		}
		a.s.copied = append(a.s.copied, p)
	}
}

// cd follows the folder a cd or pushd moves to, for the relative names
// after it: static folders join the set, an unknown one makes every later
// relative name ask.
func (a *analyzer) cd(args []arg) {
	physical := false
	i, ok := skipOpts(args, optSpec{}, func(opt string, _ arg) { physical = physical || opt == "-P" })
	if !ok {
		a.cwdUnknown = true
		return
	}
	var target string
	switch {
	case i >= len(args):
		if a.home == "" {
			a.cwdUnknown = true
			return
		}
		target = a.home
	case !args[i].static:
		a.cwdUnknown = true
		return
	case args[i].text == "-" || strings.HasPrefix(args[i].text, "+") || strings.HasPrefix(args[i].text, "-"):
		return // back to a folder already in the set (cd -, pushd +N)
	default:
		target = args[i].text
	}
	if os.Getenv("CDPATH") != "" && !filepath.IsAbs(target) {
		a.cwdUnknown = true
		return
	}
	var next []string
	for _, p := range a.candidates(target) {
		if physical {
			r, err := resolveView(p, a.temp)
			if err != nil {
				a.cwdUnknown = true
				continue
			}
			p = r
		} else {
			p = filepath.Clean(p) // cd -L drops "x/.." by name, as bash does
		}
		next = append(next, p)
	}
	for _, p := range next {
		if !slices.Contains(a.cwds, p) {
			a.cwds = append(a.cwds, p)
		}
	}
	if len(a.cwds) > maxCwds {
		a.cwds = a.cwds[:maxCwds]
		a.cwdUnknown = true
	}
}

// hash records hash -p FILE NAME...: NAME runs FILE from then on.
func (a *analyzer) hash(args []arg) {
	file := ""
	i, ok := skipOpts(args, optSpec{Short: "pt"}, func(opt string, v arg) {
		if opt == "-p" {
			file = v.text
			if !v.static {
				file = unknownMark
			}
		}
	})
	if file == "" {
		return
	}
	for _, w := range args[i:] {
		if !ok || !w.static || file == unknownMark {
			a.unknownf("hash -p binds a name to a file only known when the command runs")
			return
		}
		a.hashed[w.text] = file
	}
	a.copiedFile(file, false)
}

// globBudget bounds the folders the globs of one command may list.
type globBudget struct{ left int }

// maxGlobDirs is the folders one command's globs may list; past it the
// command asks, since a match left unseen could be anything.
const maxGlobDirs = 4096

func newGlobBudget() *globBudget { return &globBudget{left: maxGlobDirs} }

// exhausted reports a budget spent.
func (b *globBudget) exhausted() bool { return b.left < 0 }

// globsUnjudged says why a spent budget leaves matches unjudged.
var globsUnjudged = fmt.Sprintf("the command's globs list more than %d folders or match more than %d names, so some matches go unjudged", maxGlobDirs, maxGlobMatches)

// expandGlob expands a glob pattern (absolute) against the filesystem, one
// component at a time with the kernel's view of "..", and returns every
// match; none when nothing matches (the caller judges the glob's literal
// folder then). Each folder listed spends one of budget; more than
// maxGlobMatches matches spend all of it.
func expandGlob(pattern string, budget *globBudget) []string {
	return expandGlobIn(pattern, budget, nil)
}

// expandGlobIn is expandGlob in the session's view of its temp folder:
// the folders are listed where they are on disk (temp.Map), the matches
// named as the session names them.
func expandGlobIn(pattern string, budget *globBudget, temp *sdk.TempFolder) []string {
	cur := []string{""}
	for i, part := range strings.Split(pattern, "/") {
		if i == 0 && part == "" {
			continue
		}
		if !strings.ContainsAny(part, "*?[") {
			for j := range cur {
				cur[j] += "/" + part
			}
			continue
		}
		var next []string
		for _, dir := range cur {
			d := dir
			if d == "" {
				d = "/"
			}
			if budget.left--; budget.left < 0 {
				return nil
			}
			disk, _ := temp.Map(d)
			entries, err := os.ReadDir(disk)
			if err != nil {
				continue
			}
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".") && !strings.HasPrefix(part, ".") {
					continue // bash's * skips dot files
				}
				if ok, _ := filepath.Match(part, e.Name()); ok {
					next = append(next, dir+"/"+e.Name())
				}
			}
			if len(next) > maxGlobMatches {
				// Too many to judge one by one: as unseen as a spent
				// budget, so the command asks (or, under a deny rule, is
				// refused) instead of being judged by its folder alone.
				budget.left = -1
				return nil
			}
		}
		if cur = next; len(cur) == 0 {
			return nil
		}
	}
	return cur
}
