package tools

import (
	"context"
	"errors"

	"github.com/yagent/yagent/plugins/search/internal/grep"
	"github.com/yagent/yagent/plugins/search/internal/nav"
	"github.com/yagent/yagent/sdk"
)

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
