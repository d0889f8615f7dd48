package tools

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// TestScreenshotsLandInTheWorkspace: whatever path the model asks for, the
// file is written under <workspace>/.yagent/screenshots by its base name,
// next to a .gitignore of "*", and comes back as a PNG image.
func TestScreenshotsLandInTheWorkspace(t *testing.T) {
	c := browser(t)
	c.open("/long")
	outside := t.TempDir()
	cases := []struct {
		filename string
		full     bool
		want     string // path relative to the workspace
	}{
		{"home.png", false, ".yagent/screenshots/home.png"},
		{"../../escape.png", false, ".yagent/screenshots/escape.png"},
		{filepath.Join(outside, "abs.png"), true, ".yagent/screenshots/abs.png"},
		{`..\..\win name?.jpg`, false, ".yagent/screenshots/win-name.png"},
	}
	for _, tc := range cases {
		res := c.ok(TakeScreenshotName, map[string]any{"filename": tc.filename, "full_page": tc.full})
		if len(res.Images) != 1 || res.Images[0].MIMEType != "image/png" || !bytes.HasPrefix(res.Images[0].Data, pngMagic) {
			t.Fatalf("%q: the result carries no PNG image: %+v", tc.filename, res.Images)
		}
		if res.Images[0].Path != tc.want {
			t.Fatalf("%q: image path %q, want %q", tc.filename, res.Images[0].Path, tc.want)
		}
		data, err := os.ReadFile(filepath.Join(c.c.Workspace, filepath.FromSlash(tc.want)))
		if err != nil || !bytes.Equal(data, res.Images[0].Data) {
			t.Fatalf("%q: the file at %s is not the image (err %v)", tc.filename, tc.want, err)
		}
		if !strings.Contains(res.Text, tc.want) {
			t.Fatalf("%q: the text does not name where the file is: %q", tc.filename, res.Text)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("a screenshot was written outside the workspace: %v", entries)
	}
	ignore, err := os.ReadFile(filepath.Join(c.c.Workspace, ".yagent", "screenshots", ".gitignore"))
	if err != nil || string(ignore) != "*\n" {
		t.Fatalf(".gitignore: %q, %v", ignore, err)
	}
	// The full page is taller than the 720px window.
	visible := c.ok(TakeScreenshotName, map[string]any{"filename": "v"}).Images[0].Data
	full := c.ok(TakeScreenshotName, map[string]any{"filename": "f", "full_page": true}).Images[0].Data
	if hv, hf := pngHeight(t, visible), pngHeight(t, full); hv > 800 || hf < 3000 {
		t.Fatalf("visible screenshot %dpx high, full page %dpx; want about 720 and over 3000", hv, hf)
	}
	// No name: one is made up, still in the folder.
	if res := c.ok(TakeScreenshotName, map[string]any{}); !strings.HasPrefix(res.Images[0].Path, ".yagent/screenshots/page-") {
		t.Fatalf("default name: %q", res.Images[0].Path)
	}
}

// TestScreenshotDoesNotFollowSymlinksOut: a .yagent/screenshots that is a
// symlink to a folder outside the workspace is not written through.
func TestScreenshotDoesNotFollowSymlinksOut(t *testing.T) {
	c := browser(t)
	c.open("/")
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(c.c.Workspace, ".yagent"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(c.c.Workspace, ".yagent", "screenshots")); err != nil {
		t.Fatal(err)
	}
	res := c.ok(TakeScreenshotName, map[string]any{"filename": "x.png"})
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("the screenshot went through the symlink: %v", entries)
	}
	if len(res.Images) != 1 || res.Images[0].Path != "" || !strings.Contains(res.Text, "could not be saved") {
		t.Fatalf("result: path %q, text %q", res.Images[0].Path, res.Text)
	}
}

func pngHeight(t *testing.T, b []byte) int {
	t.Helper()
	if len(b) < 24 || !bytes.HasPrefix(b, pngMagic) {
		t.Fatalf("not a PNG")
	}
	return int(b[20])<<24 | int(b[21])<<16 | int(b[22])<<8 | int(b[23])
}
