package wsroot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/yagent/yagent/sdk"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	out, _ := filepath.EvalSymlinks(t.TempDir())
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(ws, "a/b"), 0o755))
	must(os.WriteFile(filepath.Join(ws, "a/b/f"), nil, 0o644))
	must(os.Symlink("a/b", filepath.Join(ws, "rel")))
	must(os.Symlink(filepath.Join(ws, "a"), filepath.Join(ws, "abs")))
	must(os.Symlink(out, filepath.Join(ws, "escape")))
	must(os.Symlink("loop", filepath.Join(ws, "loop")))
	must(os.WriteFile(filepath.Join(out, "ok"), nil, 0o644))

	r, err := New(ws, []string{filepath.Join(out, "ok")})
	must(err)
	t.Cleanup(func() { r.Close() })
	tests := []struct {
		path     string
		rel      string
		exists   bool
		external bool
		code     string
	}{
		{path: "a/b/f", rel: "a/b/f", exists: true},
		{path: filepath.Join(ws, "a/b/f"), rel: "a/b/f", exists: true},
		{path: ".", rel: ".", exists: true},
		{path: "rel/f", rel: "a/b/f", exists: true},
		{path: "abs/b/f", rel: "a/b/f", exists: true},
		{path: "a/new/deeper", rel: "a/new/deeper"},
		{path: "a/../a/b/f", rel: "a/b/f", exists: true},
		{path: filepath.Join(out, "ok"), rel: "ok", exists: true, external: true},
		{path: "escape/ok", rel: "ok", exists: true, external: true},
		{path: "escape/other", code: sdk.CodeNeedsAuth},
		{path: "../x", code: sdk.CodeNeedsAuth},
		{path: "loop", code: sdk.CodeInvalidInput},
		{path: "", code: sdk.CodeInvalidInput},
		{path: "a\x00b", code: sdk.CodeInvalidInput},
	}
	for _, tt := range tests {
		got, err := r.Resolve(tt.path)
		if tt.code != "" {
			if te, ok := sdk.AsToolError(err); !ok || te.Code != tt.code {
				t.Errorf("Resolve(%q): got %+v, %v; want %s", tt.path, got, err, tt.code)
			}
			continue
		}
		if err != nil || got.Rel != tt.rel || got.Exists != tt.exists || got.External != tt.external {
			t.Errorf("Resolve(%q): got rel %q exists %v external %v, %v; want %q %v %v",
				tt.path, got.Rel, got.Exists, got.External, err, tt.rel, tt.exists, tt.external)
		}
	}
}
