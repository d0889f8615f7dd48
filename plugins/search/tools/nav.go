package tools

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/yagent/yagent/plugins/search/internal/grep"
	"github.com/yagent/yagent/plugins/search/internal/nav"
	"github.com/yagent/yagent/sdk"
)

// LoaderArg is the first argument that starts the search plugin's binary
// as the Go loader, which find_references starts again inside a call's
// sandbox (Config.GoLoader): the binary's main serves ServeLoader then,
// before anything of a plugin starts.
const LoaderArg = nav.LoaderArg

// ServeLoader serves as the Go loader: it reads one query on stdin, writes
// the answer on stdout and returns the exit code.
func ServeLoader(stdin io.Reader, stdout, stderr io.Writer) int {
	return nav.ServeLoader(stdin, stdout, stderr)
}

// finder returns the navigation finder of a call: ctags from the setting
// or PATH, grep through ripgrep when found, paths shown from the workspace.
func finder(ctx context.Context, cfg Config) (*nav.Finder, []sdk.Note) {
	var notes []sdk.Note
	ctags := sdk.LookProgram(cfg.CtagsPath, "ctags", cfg.LookPath)
	if note := ctags.Note("ctags_path"); note != "" {
		notes = append(notes, sdk.Note{Kind: "ctags_path", Detail: note})
	}
	rg, note := grep.RgPath(cfg.RgPath, cfg.LookPath)
	if note != "" {
		notes = append(notes, sdk.Note{Kind: "rg_path", Detail: note})
	}
	info := sdk.CallFrom(ctx)
	roots := append([]string{info.Workspace}, info.ApprovedPaths...)
	return &nav.Finder{Ctags: ctags.Path, Grep: &grep.Engine{RgPath: rg}, Base: info.Workspace, Roots: roots,
		Loader: cfg.GoLoader, LoaderEnv: cfg.GoLoaderEnv}, notes
}

// nameQuery is the start of a query for a name over the workspace: the
// name trimmed (empty refused with advice), the workspace's root and the
// call's finder with its notes.
func nameQuery(ctx context.Context, cfg Config, name, advice string) (trimmed, root string, f *nav.Finder, notes []sdk.Note, err error) {
	trimmed = strings.TrimSpace(name)
	if trimmed == "" {
		return "", "", nil, nil, sdk.Errorf(sdk.CodeInvalidInput, "name is empty; %s", advice)
	}
	if root, err = resolve(ctx, ""); err != nil {
		return "", "", nil, nil, err
	}
	f, notes = finder(ctx, cfg)
	return trimmed, root, f, notes, nil
}

// navError turns a navigation error into what the model reads.
func navError(err error, shown string) error {
	switch {
	case errors.Is(err, nav.ErrNoParser):
		return sdk.Errorf(sdk.CodeInvalidInput, "%v; code_outline reads Go and Python, and other languages when Universal Ctags is installed; use grep or read_file for %s", err, shown)
	case errors.Is(err, nav.ErrNoSuchFunc):
		return sdk.Errorf(sdk.CodeNotFound, "%v", err)
	case errors.Is(err, nav.ErrNotIdentifier):
		return sdk.Errorf(sdk.CodeInvalidInput, "%v; give a name such as Parse or Server.Start, or use grep for other text", err)
	}
	return toolError(err)
}
