package nav

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindReferences_LoadsNothingOutside: a go.mod replace to an outside
// folder, or a package folder symlinked out, does not make the type
// checker show outside code; the module is named as skipped.
func TestFindReferences_LoadsNothingOutside(t *testing.T) {
	t.Parallel()
	// The outside type's name shows in the description of Token.
	const secret = "SECRETtype"
	for _, tc := range []struct {
		name, gomod, imp string
		link             bool // ws/pkg is a symlink to the outside package
		wantSkipped      string
	}{
		{name: "replace to an outside folder", gomod: "require example.com/o v0.0.0\nreplace example.com/o => ../outside/o\n", imp: "example.com/o", wantSkipped: "replaces example.com/o"},
		{name: "replace by absolute path", gomod: "require example.com/o v0.0.0\nreplace example.com/o => OUTSIDE/o\n", imp: "example.com/o", wantSkipped: "outside the workspace"},
		{name: "package folder symlinked out", imp: "example.com/ws/pkg", link: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			if r, err := filepath.EvalSymlinks(root); err == nil {
				root = r
			}
			ws, out := filepath.Join(root, "ws"), filepath.Join(root, "outside")
			writeFile(t, filepath.Join(out, "o", "go.mod"), "module example.com/o\n\ngo 1.21\n")
			writeFile(t, filepath.Join(out, "o", "o.go"), "package o\n\ntype "+secret+" int\n\nconst Token "+secret+" = 1\n")
			gomod := strings.ReplaceAll(tc.gomod, "OUTSIDE", out)
			writeFile(t, filepath.Join(ws, "go.mod"), "module example.com/ws\n\ngo 1.21\n\n"+gomod)
			name := "o"
			if tc.link {
				name = "pkg"
				writeFile(t, filepath.Join(out, "o", "go.mod"), "")
				if err := os.Remove(filepath.Join(out, "o", "go.mod")); err != nil {
					t.Fatal(err)
				}
				writeFile(t, filepath.Join(out, "o", "o.go"), "package pkg\n\ntype "+secret+" int\n\nconst Token "+secret+" = 1\n")
				if err := os.Symlink(filepath.Join(out, "o"), filepath.Join(ws, "pkg")); err != nil {
					t.Fatal(err)
				}
			}
			writeFile(t, filepath.Join(ws, "main.go"), "package main\n\nimport \""+tc.imp+"\"\n\nfunc main() { println("+name+".Token) }\n")
			f := &Finder{Base: ws}
			res, err := f.FindReferences(context.Background(), ws, "Token")
			if err != nil {
				t.Fatalf("FindReferences: %v", err)
			}
			b, _ := json.Marshal(res)
			if strings.Contains(string(b), secret) || strings.Contains(string(b), filepath.Join(out, "o", "o.go")) {
				t.Fatalf("FindReferences shows outside code: %s", b)
			}
			if tc.wantSkipped != "" && !strings.Contains(strings.Join(res.Skipped, "\n"), tc.wantSkipped) {
				t.Errorf("Skipped = %q, want it to say %q", res.Skipped, tc.wantSkipped)
			}
			if !strings.Contains(string(b), "main.go") {
				t.Errorf("FindReferences lost the workspace use: %s", b)
			}
		})
	}
}

// TestFindReferences_ModuleAboveWorkspaceSkipped: a workspace inside a
// module rooted above it does not type-check that module, which would load
// its packages outside the workspace.
func TestFindReferences_ModuleAboveWorkspaceSkipped(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	writeFile(t, filepath.Join(root, "go.mod"), "module example.com/r\n\ngo 1.21\n")
	writeFile(t, filepath.Join(root, "outside", "o.go"), "package outside\n\ntype SECRETtype int\n\nconst Token SECRETtype = 1\n")
	writeFile(t, filepath.Join(ws, "main.go"), "package main\n\nimport \"example.com/r/outside\"\n\nfunc main() { println(outside.Token) }\n")
	res, err := (&Finder{Base: ws}).FindReferences(context.Background(), ws, "Token")
	if err != nil {
		t.Fatalf("FindReferences: %v", err)
	}
	b, _ := json.Marshal(res)
	if strings.Contains(string(b), "SECRETtype") || !strings.Contains(strings.Join(res.Skipped, "\n"), "outside the workspace") {
		t.Fatalf("FindReferences = %s, want the module above the workspace skipped", b)
	}
}

// TestFindReferences_ReplaceInsideKept: a replace to a folder inside the
// workspace is type-checked as before.
func TestFindReferences_ReplaceInsideKept(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "lib", "go.mod"), "module example.com/lib\n\ngo 1.21\n")
	writeFile(t, filepath.Join(ws, "lib", "lib.go"), "package lib\n\nconst Token = \"inside\"\n")
	writeFile(t, filepath.Join(ws, "go.mod"), "module example.com/ws\n\ngo 1.21\n\nrequire example.com/lib v0.0.0\nreplace example.com/lib => ./lib\n")
	writeFile(t, filepath.Join(ws, "main.go"), "package main\n\nimport \"example.com/lib\"\n\nfunc main() { println(lib.Token) }\n")
	res, err := (&Finder{Base: ws}).FindReferences(context.Background(), ws, "Token")
	if err != nil {
		t.Fatalf("FindReferences: %v", err)
	}
	if len(res.Skipped) != 0 || len(res.Groups) == 0 || res.Groups[0].Object == "" {
		t.Fatalf("FindReferences = %+v, want the use resolved by the type checker", res)
	}
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
