package ignore

import (
	"bytes"
	"path"
	"strings"
)

// Match is the verdict of ignore rules on one path.
type Match int

// The verdicts: no rule matched, a rule excludes the path, a negated rule
// re-includes it.
const (
	None Match = iota
	Ignore
	Whitelist
)

// rule is one pattern line of an ignore file.
type rule struct {
	glob     *Glob
	negate   bool
	dirOnly  bool
	anchored bool
}

// File is the parsed rules of one ignore file, relative to the directory
// that holds it.
type File struct {
	dir   string
	rules []rule
}

// ParseFile parses the ignore file data whose rules are relative to the
// absolute directory dir. Lines that do not compile are skipped, as git
// skips them.
func ParseFile(dir string, data []byte) *File {
	f := &File{dir: dir}
	for _, raw := range bytes.Split(data, []byte{'\n'}) {
		if r, ok := parseLine(string(raw)); ok {
			f.rules = append(f.rules, r)
		}
	}
	return f
}

// Len returns the number of rules in f.
func (f *File) Len() int { return len(f.rules) }

func parseLine(line string) (rule, bool) {
	line = strings.TrimSuffix(line, "\r")
	if line == "" || line[0] == '#' {
		return rule{}, false
	}
	// Trailing blanks are dropped unless escaped with a backslash.
	for len(line) > 0 && (line[len(line)-1] == ' ' || line[len(line)-1] == '\t') {
		if len(line) >= 2 && line[len(line)-2] == '\\' {
			break
		}
		line = line[:len(line)-1]
	}
	var r rule
	if strings.HasPrefix(line, "!") {
		r.negate = true
		line = line[1:]
	}
	if strings.HasPrefix(line, "/") {
		r.anchored = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") && !strings.HasSuffix(line, `\/`) {
		r.dirOnly = true
		line = line[:len(line)-1]
	}
	if line == "" {
		return rule{}, false
	}
	if strings.Contains(line, "/") {
		r.anchored = true
	}
	g, err := CompileGlob(line)
	if err != nil {
		return rule{}, false
	}
	r.glob = g
	return r, true
}

// Match returns the verdict of f's rules on the absolute path abs: the last
// matching line wins. A path outside f's directory matches nothing.
func (f *File) Match(abs string, isDir bool) Match {
	if f == nil || len(f.rules) == 0 {
		return None
	}
	var rel string
	if f.dir == "/" {
		rel = strings.TrimPrefix(abs, "/")
	} else if r, ok := strings.CutPrefix(abs, f.dir+"/"); ok {
		rel = r
	}
	if rel == "" {
		return None
	}
	base := path.Base(rel)
	for i := len(f.rules) - 1; i >= 0; i-- {
		r := &f.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		subject := base
		if r.anchored {
			subject = rel
		}
		if r.glob.Match(subject) {
			if r.negate {
				return Whitelist
			}
			return Ignore
		}
	}
	return None
}
