package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/yagent/yagent/plugins/search/internal/fetch"
	"github.com/yagent/yagent/sdk"
)

// Version is the search plugin's version.
const Version = "0.1.0"

// Config is what the search tools depend on. The zero value finds ripgrep
// and ctags on PATH and fetches with the default limits.
type Config struct {
	// RgPath is the plugin's rg_path setting (the profile's search.rg_path):
	// a ripgrep binary tried before PATH; "off" never uses ripgrep.
	RgPath string
	// CtagsPath is the plugin's ctags_path setting: a Universal Ctags binary
	// tried before PATH; "off" never uses ctags.
	CtagsPath string
	// LookPath finds executables; nil means exec.LookPath. It is the seam
	// tests use to hide ripgrep or ctags.
	LookPath func(file string) (string, error)
	// Fetch tunes web_fetch; nil means fetch.DefaultOptions.
	Fetch *fetch.Options
	// GoLoader is the binary started as the Go loader under a sandbox
	// (nav.LoaderArg); empty means the plugin's own. GoLoaderEnv is its
	// environment; nil means the plugin's. Seams for tests.
	GoLoader    string
	GoLoaderEnv []string
}

// FromSettings returns the Config the plugin's settings describe.
func FromSettings(settings map[string]string) Config {
	return Config{RgPath: settings["rg_path"], CtagsPath: settings["ctags_path"]}
}

// All returns the search tools, sorted by name.
func All(cfg Config) []sdk.Tool {
	if cfg.LookPath == nil {
		cfg.LookPath = exec.LookPath
	}
	return []sdk.Tool{
		CodeOutline(cfg),
		FindReferences(cfg),
		FindSymbol(cfg),
		Grep(cfg),
		SearchFiles(cfg),
		WebFetch(cfg),
	}
}

// resolve returns the path argument p as the host resolved it: absolute,
// used as it is (no trimming, no "~", never the plugin's working folder);
// empty is the workspace itself, for a path left out.
func resolve(ctx context.Context, p string) (string, error) {
	if p == "" {
		ws := sdk.CallFrom(ctx).Workspace
		if ws == "" {
			return "", sdk.Errorf(sdk.CodeInvalidInput, "no workspace is set for this call; give an absolute path")
		}
		return filepath.Clean(ws), nil
	}
	return sdk.PathArg(ctx, p)
}

// display returns how abs is shown: relative to the workspace when inside
// it, as the session's commands name it in the session's temp folder
// (/tmp/a), absolute otherwise.
func display(ctx context.Context, abs string) string {
	info := sdk.CallFrom(ctx)
	if ws := info.Workspace; ws != "" {
		if rel, err := filepath.Rel(ws, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return filepath.ToSlash(rel)
		}
	}
	return info.Temp.Shown(abs)
}

// statPath returns the info of abs, or a not_found error the model can act on.
func statPath(abs, shown string) (os.FileInfo, error) {
	info, err := os.Stat(abs)
	if errors.Is(err, os.ErrNotExist) {
		return nil, sdk.Errorf(sdk.CodeNotFound, "%s does not exist; use search_files or list_dir to find the right path", shown)
	}
	if err != nil {
		return nil, sdk.Errorf(sdk.CodeToolFailed, "%s: %v", shown, err)
	}
	return info, nil
}

// clamp returns v limited to [lo, hi], with def for zero, and a note when
// it had to be changed.
func clamp(name string, v, def, lo, hi int) (int, *sdk.Note) {
	switch {
	case v == 0:
		return def, nil
	case v < lo:
		return lo, &sdk.Note{Kind: "clamped", Detail: fmt.Sprintf("%s %d raised to %d", name, v, lo)}
	case v > hi:
		return hi, &sdk.Note{Kind: "clamped", Detail: fmt.Sprintf("%s %d lowered to %d", name, v, hi)}
	}
	return v, nil
}

// toolError turns a Go error from the internals into what the model reads.
func toolError(err error) error {
	if _, ok := sdk.AsToolError(err); ok {
		return err
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return sdk.Errorf(sdk.CodeTimeout, "the search ran out of time; narrow the path or the pattern")
	case errors.Is(err, context.Canceled):
		return sdk.Errorf(sdk.CodeCancelled, "the search was cancelled")
	}
	return err
}
