package tools

import (
	"context"
	"errors"
	"os/exec"

	"github.com/yagent/yagent/plugins/search/internal/grep"
	"github.com/yagent/yagent/plugins/search/internal/nav"
	"github.com/yagent/yagent/sdk"
)

// finder returns the navigation finder of a call: ctags from the setting
// or PATH, grep through ripgrep when found, paths shown from the workspace.
func finder(ctx context.Context, cfg Config) (*nav.Finder, []sdk.Note) {
	var notes []sdk.Note
	ctags, note := binPath(cfg.CtagsPath, "ctags", cfg.LookPath)
	if note != "" {
		notes = append(notes, sdk.Note{Kind: "ctags_path", Detail: note})
	}
	rg, note := grep.RgPath(cfg.RgPath, cfg.LookPath)
	if note != "" {
		notes = append(notes, sdk.Note{Kind: "rg_path", Detail: note})
	}
	info := sdk.CallFrom(ctx)
	roots := append([]string{info.Workspace}, info.ApprovedPaths...)
	return &nav.Finder{Ctags: ctags, Grep: &grep.Engine{RgPath: rg}, Base: info.Workspace, Roots: roots,
		Loader: cfg.GoLoader, LoaderEnv: cfg.GoLoaderEnv}, notes
}

// binPath is grep.RgPath for any program: the setting when it names an
// executable, else name on PATH; "off" means none.
func binPath(setting, name string, lookPath func(string) (string, error)) (string, string) {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	switch setting {
	case "off", "none", "false":
		return "", ""
	case "":
		if p, err := lookPath(name); err == nil {
			return p, ""
		}
		return "", ""
	}
	if p, err := lookPath(setting); err == nil {
		return p, ""
	}
	note := name + "_path " + setting + " is not an executable; "
	if p, err := lookPath(name); err == nil {
		return p, note + "using " + p
	}
	return "", note + "none found on PATH"
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
