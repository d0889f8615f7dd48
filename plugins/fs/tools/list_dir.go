package tools

import (
	"context"
	_ "embed"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/yagent/yagent/plugins/fs/internal/wsroot"
	"github.com/yagent/yagent/sdk"
)

var (
	// maxListDepth caps list_dir's depth.
	maxListDepth = 5
	// maxListEntries caps the entries one list_dir call shows.
	maxListEntries = 1000
)

const defaultListDepth = 2

//go:embed list_dir.md
var listDirDoc string

type listDirInput struct {
	Path  string `json:"path,omitempty"`
	Depth int    `json:"depth,omitempty"`
}

// ListDirData is list_dir's structured result.
type ListDirData struct {
	Path    string `json:"path"`
	Depth   int    `json:"depth"`
	Entries int    `json:"entries"`
	Cut     bool   `json:"cut,omitempty"`
}

func (s *Service) listDirTool() sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        "list_dir",
		Description: listDirDoc,
		Brief:       "List a directory tree to a given depth.",
		Effect:      sdk.EffectRead,
		ReadOnly:    true,
		Roles:       map[string]sdk.Role{"path": sdk.RolePathRead},
	}, s.listDir)
}

func (s *Service) listDir(ctx context.Context, in listDirInput) (*sdk.Result, error) {
	if in.Depth < 0 {
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "depth %d is negative: give 1 to %d, or leave it out", in.Depth, maxListDepth)
	}
	depth := in.Depth
	if depth == 0 {
		depth = defaultListDepth
	}
	var notes []sdk.Note
	if depth > maxListDepth {
		notes = append(notes, sdk.Note{Kind: "depth_capped", Detail: fmt.Sprintf("depth %d lowered to %d", depth, maxListDepth)})
		depth = maxListDepth
	}
	path := in.Path
	if path == "" {
		path = "."
	}
	c, err := s.begin(ctx, path)
	if err != nil {
		return nil, err
	}
	defer c.close()
	t := c.target
	path = c.shown
	if !t.Exists {
		return nil, sdk.Errorf(sdk.CodeNotFound, "%s does not exist", path)
	}
	fi, err := t.Root.Stat(t.Rel)
	if err != nil {
		return nil, wsroot.Describe(path, err)
	}
	if !fi.IsDir() {
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "%s is a file, not a folder: read it with read_file", path)
	}

	l := lister{t: t, max: maxListEntries}
	var out strings.Builder
	out.WriteString(strings.TrimSuffix(filepath.ToSlash(path), "/") + "/\n")
	l.walk(ctx, &out, t.Rel, 1, depth)
	data := ListDirData{Path: path, Depth: depth, Entries: l.n, Cut: l.cut}
	if l.n == 0 {
		out.WriteString("  (empty)\n")
	}
	if l.cut {
		fmt.Fprintf(&out, "[list_dir: stopped at %d entries; list a subfolder, or use a smaller depth]\n", l.max)
		notes = append(notes, sdk.Note{Kind: "truncated", Detail: fmt.Sprintf("%d entries", l.max)})
	}
	return &sdk.Result{Text: out.String(), Data: data, Notes: notes}, nil
}

type lister struct {
	t   wsroot.Target
	max int
	n   int
	cut bool
}

// walk writes dir's entries, sorted by name, indented two spaces a level;
// folders end in "/", symlinks show their target and are not followed.
func (l *lister) walk(ctx context.Context, out *strings.Builder, dir string, level, depth int) {
	f, err := l.t.Root.Open(dir)
	if err != nil {
		fmt.Fprintf(out, "%s(cannot open: %v)\n", strings.Repeat("  ", level), unwrapPath(err))
		return
	}
	entries, err := f.ReadDir(-1)
	_ = f.Close()
	if err != nil && len(entries) == 0 {
		fmt.Fprintf(out, "%s(cannot list: %v)\n", strings.Repeat("  ", level), unwrapPath(err))
		return
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	indent := strings.Repeat("  ", level)
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		if l.n >= l.max || ctx.Err() != nil {
			l.cut = true
			return
		}
		l.n++
		name := e.Name()
		rel := filepath.Join(dir, name)
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			target, _ := l.t.Root.Readlink(rel)
			fmt.Fprintf(out, "%s%s -> %s\n", indent, name, target)
		case e.IsDir():
			fmt.Fprintf(out, "%s%s/\n", indent, name)
			if level < depth {
				l.walk(ctx, out, rel, level+1, depth)
				if l.cut {
					return
				}
			}
		default:
			fmt.Fprintf(out, "%s%s\n", indent, name)
		}
	}
}

// unwrapPath drops the path from an fs error: the listing already shows it.
func unwrapPath(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}
