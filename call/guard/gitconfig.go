package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The read-only classifier softens git only when the repository's own
// config sets nothing that makes git run a program. The config is parsed
// here rather than by running git: git at check time would read the same
// hostile file with every feature of the git found on PATH (pager.config,
// fsmonitor), and the guard must run nothing the workspace chose.

// maxIncludeDepth bounds include.path chains, as git's own limit of 10.
const maxIncludeDepth = 10

// maxGitConfigBytes bounds one git config file the guard reads.
const maxGitConfigBytes = 1 << 20

// errGitConfig is a config the guard cannot read or parse: not softened.
var errGitConfig = errors.New("git config")

// gitRunsProgram returns why git run in dir may run a program the
// repository chose (its config, hooks), "" when it cannot. The repository
// is found as git finds it: the nearest .git folder or "gitdir:" file at
// or above dir, or dir itself laid out as a bare repository.
func gitRunsProgram(dir, home string) string {
	return gitRepoRunsProgram(dir, home, 0)
}

// maxSubmoduleDepth bounds submodules within submodules.
const maxSubmoduleDepth = 4

func gitRepoRunsProgram(dir, home string, depth int) string {
	if depth > maxSubmoduleDepth {
		return fmt.Sprintf("the repository at %s nests submodules more than %d deep", dir, maxSubmoduleDepth)
	}
	gitdir, top, err := findGitDir(dir)
	if err != nil {
		return err.Error()
	}
	if gitdir == "" {
		return "" // no repository: git runs nothing of the workspace's
	}
	common := gitdir
	if b, err := readRegular(filepath.Join(gitdir, "commondir"), maxGitConfigBytes); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitdir, c)
		}
		common = c
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("the repository's commondir cannot be read: %v", err)
	}
	files := []string{filepath.Join(common, "config"), filepath.Join(gitdir, "config.worktree")}
	if common != gitdir {
		files = append(files, filepath.Join(gitdir, "config"), filepath.Join(common, "config.worktree"))
	}
	for _, f := range files {
		if why := scanGitConfig(f, home, 0); why != "" {
			return why
		}
	}
	if why := hooksIn(filepath.Join(common, "hooks")); why != "" {
		return why
	}
	// git status looks into each submodule, with the submodule's own
	// config: those under .git/modules, and those .gitmodules names.
	if why := modulesRunProgram(filepath.Join(common, "modules"), home, depth); why != "" {
		return why
	}
	if top == "" {
		return ""
	}
	b, err := readRegular(filepath.Join(top, ".gitmodules"), maxGitConfigBytes)
	if err != nil {
		return ""
	}
	entries, err := parseGitConfig(string(b))
	if err != nil {
		return fmt.Sprintf("%s does not parse: %v", filepath.Join(top, ".gitmodules"), err)
	}
	for _, e := range entries {
		if e.section != "submodule" || e.key != "path" || e.value == "" {
			continue
		}
		sub := filepath.Join(top, e.value)
		if _, err := os.Lstat(filepath.Join(sub, ".git")); err != nil {
			continue // not checked out: git has nothing to run there
		}
		if why := gitRepoRunsProgram(sub, home, depth+1); why != "" {
			return why
		}
	}
	return ""
}

// modulesRunProgram scans the submodule git folders under dir.
func modulesRunProgram(dir, home string, depth int) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	if depth > maxSubmoduleDepth {
		return fmt.Sprintf("%s nests submodules more than %d deep", dir, maxSubmoduleDepth)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		d := filepath.Join(dir, e.Name())
		if why := scanGitConfig(filepath.Join(d, "config"), home, 0); why != "" {
			return why
		}
		if why := hooksIn(filepath.Join(d, "hooks")); why != "" {
			return why
		}
		// A submodule's own submodules, or a module name with slashes.
		if why := modulesRunProgram(filepath.Join(d, "modules"), home, depth+1); why != "" {
			return why
		}
		if _, err := os.Stat(filepath.Join(d, "HEAD")); err != nil {
			if why := modulesRunProgram(d, home, depth+1); why != "" {
				return why
			}
		}
	}
	return ""
}

// findGitDir returns the git folder of the repository holding dir and its
// top folder ("" for a bare repository); "" when there is none.
func findGitDir(dir string) (gitdir, top string, err error) {
	for d := dir; ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		fi, err := os.Stat(dotgit)
		switch {
		case err == nil && fi.IsDir():
			return dotgit, d, nil
		case err == nil:
			b, err := readRegular(dotgit, maxGitConfigBytes)
			if err != nil {
				return "", "", fmt.Errorf("%w: %s cannot be read: %v", errGitConfig, dotgit, err)
			}
			line, _, _ := strings.Cut(string(b), "\n")
			g, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
			if !ok {
				return "", "", fmt.Errorf("%w: %s is not a gitdir: file", errGitConfig, dotgit)
			}
			g = strings.TrimSpace(g)
			if !filepath.IsAbs(g) {
				g = filepath.Join(d, g)
			}
			return g, d, nil
		case !errors.Is(err, fs.ErrNotExist) && !isNotDir(err):
			return "", "", fmt.Errorf("%w: %s cannot be read: %v", errGitConfig, dotgit, err)
		}
		if isBareRepo(d) {
			return d, "", nil
		}
		if parent := filepath.Dir(d); parent == d {
			return "", "", nil
		}
	}
}

// isBareRepo reports a folder git takes for a bare repository.
func isBareRepo(d string) bool {
	head, err := os.Stat(filepath.Join(d, "HEAD"))
	if err != nil || head.IsDir() {
		return false
	}
	for _, sub := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(d, sub)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// hooksIn names a hook git may run (any file but a sample).
func hooksIn(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if !e.IsDir() && !strings.HasSuffix(e.Name(), ".sample") {
			return fmt.Sprintf("the repository has the hook %s", filepath.Join(dir, e.Name()))
		}
	}
	return ""
}

// runsProgram reports a config key that makes git run a program, or point
// it at files outside the repository (core.worktree).
func runsProgram(section, key string) bool {
	switch section {
	case "alias", "filter", "pager":
		return true
	case "core":
		switch key {
		case "fsmonitor", "pager", "editor", "sshcommand", "hookspath", "worktree", "askpass", "gitproxy", "alternaterefscommand":
			return true
		}
	case "diff":
		return key == "external" || key == "textconv" || key == "command"
	case "credential":
		return key == "helper"
	case "gpg":
		return key == "program"
	case "merge":
		return key == "driver"
	case "remote":
		return key == "uploadpack" || key == "receivepack"
	case "sequence":
		return key == "editor"
	case "interactive":
		return key == "difffilter"
	case "uploadpack":
		return key == "packobjectshook"
	}
	return false
}

// scanGitConfig returns why the config file at name (and every file it
// includes) may make git run a program, "" when it cannot. A missing file
// is empty, as git takes it; one that does not parse is not softened.
func scanGitConfig(name, home string, depth int) string {
	if depth > maxIncludeDepth {
		return fmt.Sprintf("%s includes files more than %d deep", name, maxIncludeDepth)
	}
	b, err := readRegular(name, maxGitConfigBytes)
	if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
		return ""
	}
	if err != nil {
		return fmt.Sprintf("the git config %s cannot be read: %v", name, err)
	}
	entries, err := parseGitConfig(string(b))
	if err != nil {
		return fmt.Sprintf("the git config %s does not parse: %v", name, err)
	}
	for _, e := range entries {
		if runsProgram(e.section, e.key) {
			return fmt.Sprintf("the git config %s sets %s, which makes git run a program", name, e.name())
		}
		if (e.section == "include" || e.section == "includeif") && e.key == "path" {
			inc := e.value
			if strings.HasPrefix(inc, "~") {
				// git expands ~/ and ~user/ as the shell does; a home the
				// guard cannot find is a file it cannot read.
				user, rest, _ := strings.Cut(inc[1:], "/")
				h := home
				if user != "" {
					h = userHome(user)
				}
				if h == "" {
					return fmt.Sprintf("the git config %s includes %s, whose home folder is unknown", name, e.value)
				}
				inc = filepath.Join(h, rest)
			} else if !filepath.IsAbs(inc) {
				inc = filepath.Join(filepath.Dir(name), inc)
			}
			// includeIf is followed whatever its condition: the guard
			// does not judge gitdir: or onbranch:, it assumes them true.
			if why := scanGitConfig(inc, home, depth+1); why != "" {
				return why
			}
		}
	}
	return ""
}

// gitEntry is one key of a git config file.
type gitEntry struct {
	section, sub, key, value string
}

func (e gitEntry) name() string {
	if e.sub != "" {
		return e.section + "." + e.sub + "." + e.key
	}
	return e.section + "." + e.key
}

// parseGitConfig parses git's config syntax: [section], [section "sub"],
// the old [section.sub], keys with or without "= value", quotes, escapes,
// comments and backslash-continued lines. Sections and keys are folded to
// lower case, as git compares them.
func parseGitConfig(src string) ([]gitEntry, error) {
	var out []gitEntry
	section, sub := "", ""
	p := &gitParser{src: src}
	for lineNo := 1; !p.eof(); lineNo++ {
		p.skipSpace()
		if p.eof() {
			break
		}
		switch c := p.peek(); {
		case c == '\n':
			p.pos++
			continue
		case c == '#' || c == ';':
			p.skipLine()
			continue
		case c == '[':
			var err error
			if section, sub, err = p.header(); err != nil {
				return nil, fmt.Errorf("line %d: %w", lineNo, err)
			}
			p.skipSpace()
			if p.eof() || p.peek() == '\n' || p.peek() == '#' || p.peek() == ';' {
				p.skipLine()
				continue
			}
		}
		if section == "" {
			return nil, fmt.Errorf("line %d: a key outside any section", lineNo)
		}
		key := p.name()
		if key == "" {
			return nil, fmt.Errorf("line %d: not a key", lineNo)
		}
		p.skipSpace()
		value := ""
		if !p.eof() && p.peek() == '=' {
			p.pos++
			v, err := p.value()
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", lineNo, err)
			}
			value = v
		} else if !p.eof() && p.peek() != '\n' && p.peek() != '#' && p.peek() != ';' {
			return nil, fmt.Errorf("line %d: want = after %s", lineNo, key)
		}
		p.skipLine()
		out = append(out, gitEntry{section: section, sub: sub, key: strings.ToLower(key), value: value})
	}
	return out, nil
}

type gitParser struct {
	src string
	pos int
}

func (p *gitParser) eof() bool  { return p.pos >= len(p.src) }
func (p *gitParser) peek() byte { return p.src[p.pos] }

func (p *gitParser) skipSpace() {
	for !p.eof() && (p.peek() == ' ' || p.peek() == '\t' || p.peek() == '\r') {
		p.pos++
	}
}

func (p *gitParser) skipLine() {
	for !p.eof() && p.peek() != '\n' {
		p.pos++
	}
	if !p.eof() {
		p.pos++
	}
}

func (p *gitParser) name() string {
	start := p.pos
	for !p.eof() {
		c := p.peek()
		if !(c == '-' || c == '.' || c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			break
		}
		p.pos++
	}
	return p.src[start:p.pos]
}

// header parses [section], [section "sub"] or [section.sub].
func (p *gitParser) header() (section, sub string, err error) {
	p.pos++ // [
	name := p.name()
	if name == "" {
		return "", "", errors.New("a section header without a name")
	}
	section = strings.ToLower(name)
	if s, rest, ok := strings.Cut(name, "."); ok {
		section, sub = strings.ToLower(s), strings.ToLower(rest)
	}
	p.skipSpace()
	if !p.eof() && p.peek() == '"' {
		p.pos++
		var b strings.Builder
		for {
			if p.eof() || p.peek() == '\n' {
				return "", "", errors.New("an unterminated subsection name")
			}
			c := p.peek()
			p.pos++
			if c == '"' {
				break
			}
			if c == '\\' && !p.eof() {
				c = p.peek()
				p.pos++
			}
			b.WriteByte(c)
		}
		sub = b.String()
	}
	if p.eof() || p.peek() != ']' {
		return "", "", errors.New("a section header without ]")
	}
	p.pos++
	return section, sub, nil
}

// value parses a value up to the end of its line (continued by a final
// backslash), quotes and escapes removed, comments dropped.
func (p *gitParser) value() (string, error) {
	var b strings.Builder
	quoted := false
	p.skipSpace()
	for !p.eof() {
		c := p.peek()
		switch {
		case c == '\n':
			if quoted {
				return "", errors.New("an unterminated quote")
			}
			return strings.TrimRight(b.String(), " \t"), nil
		case c == '"':
			quoted = !quoted
		case (c == '#' || c == ';') && !quoted:
			for !p.eof() && p.peek() != '\n' {
				p.pos++
			}
			continue
		case c == '\\':
			p.pos++
			if p.eof() {
				return "", errors.New("a backslash at the end of the file")
			}
			switch e := p.peek(); e {
			case '\n':
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			case '\\', '"':
				b.WriteByte(e)
			case '\r':
				if p.pos+1 < len(p.src) && p.src[p.pos+1] == '\n' {
					p.pos++
				}
			default:
				return "", fmt.Errorf("an unknown escape \\%c", e)
			}
		default:
			b.WriteByte(c)
		}
		p.pos++
	}
	if quoted {
		return "", errors.New("an unterminated quote")
	}
	return strings.TrimRight(b.String(), " \t"), nil
}
