package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/yagent/yagent/sdk"
)

// ScreenshotDir is where screenshots land, relative to the workspace,
// whatever path the model asks for.
const ScreenshotDir = ".yagent/screenshots"

// maxFullPageHeight caps a full-page capture, in CSS pixels.
const maxFullPageHeight = 16384

// Screenshot captures the current tab as PNG (the whole page with full),
// writes it under the workspace's ScreenshotDir as the base name of
// filename (sanitized), and returns it as an image.
func (s *Session) Screenshot(ctx context.Context, workspace, filename string, full bool) (*sdk.Result, error) {
	t := s.current()
	a, cancel := s.bounded(ctx, t.ctx)
	defer cancel()
	params := page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng, FromSurface: ptr(true)}
	if full {
		m, err := chromedp.Call(a, page.GetLayoutMetrics, cdp.Empty{})
		if err != nil {
			return nil, s.explain(ctx, fmt.Errorf("measure the page: %w", err))
		}
		if c := m.CSSContentSize; c != nil && c.Width > 0 && c.Height > 0 {
			params.CaptureBeyondViewport = ptr(true)
			params.Clip = &page.Viewport{Width: math.Ceil(c.Width), Height: math.Min(math.Ceil(c.Height), maxFullPageHeight), Scale: 1}
		}
	}
	shot, err := chromedp.Call(a, page.CaptureScreenshot, params)
	if err != nil {
		return nil, s.explain(ctx, fmt.Errorf("take a screenshot: %w", err))
	}
	name, renamed := ScreenshotName(filename, time.Now())
	img := sdk.Image{MIMEType: "image/png", Data: shot.Data}
	what := "Took a screenshot of the visible part of the page"
	if full {
		what = "Took a screenshot of the whole page"
	}
	var text string
	if workspace == "" {
		text = what + "; it was not saved: the call names no workspace."
	} else if rel, err := writeScreenshot(workspace, name, shot.Data); err != nil {
		text = fmt.Sprintf("%s; it could not be saved: %v.", what, err)
	} else {
		img.Path = rel
		text = fmt.Sprintf("%s and saved it as %s.", what, rel)
		if renamed {
			text += " (Screenshots are always saved in the workspace's " + ScreenshotDir + " folder, under a plain file name.)"
		}
	}
	return &sdk.Result{
		Text:   text,
		Data:   map[string]any{"path": img.Path, "bytes": len(shot.Data), "full_page": full},
		Images: []sdk.Image{img},
	}, nil
}

// ScreenshotName turns the name the model asked for into a plain file
// name ending in .png: the base name only, characters other than letters,
// digits, '.', '_' and '-' replaced, at most 100 characters. An empty name
// gets one from now. renamed says the result differs from what was asked.
func ScreenshotName(requested string, now time.Time) (name string, renamed bool) {
	base := path.Base(strings.ReplaceAll(strings.TrimSpace(requested), `\`, "/"))
	if base == "." || base == "/" || base == ".." {
		base = ""
	}
	stem := base
	switch strings.ToLower(path.Ext(base)) {
	case ".png", ".jpg", ".jpeg", ".webp", ".gif":
		stem = strings.TrimSuffix(base, path.Ext(base)) // the image is PNG whatever was asked
	}
	var b strings.Builder
	for _, r := range stem {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
	}
	clean := strings.Trim(b.String(), ".-")
	if len(clean) > 100 {
		clean = clean[:100]
	}
	if clean == "" {
		clean = "page-" + now.UTC().Format("20060102-150405.000")
	}
	name = clean + ".png"
	return name, requested != "" && requested != name
}

// writeScreenshot writes data as name in the workspace's ScreenshotDir,
// creating it with a .gitignore of "*", and returns the path relative to
// the workspace. It works through os.Root, so no symlink in the workspace
// can lead the write outside it.
func writeScreenshot(workspace, name string, data []byte) (string, error) {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return "", fmt.Errorf("open the workspace: %w", err)
	}
	defer root.Close()
	dir := filepath.FromSlash(ScreenshotDir)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", ScreenshotDir, err)
	}
	ignore := filepath.Join(dir, ".gitignore")
	if _, err := root.Stat(ignore); errors.Is(err, fs.ErrNotExist) {
		if err := root.WriteFile(ignore, []byte("*\n"), 0o644); err != nil {
			return "", fmt.Errorf("write %s/.gitignore: %w", ScreenshotDir, err)
		}
	}
	if err := root.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		return "", fmt.Errorf("write %s/%s: %w", ScreenshotDir, name, err)
	}
	return ScreenshotDir + "/" + name, nil
}
