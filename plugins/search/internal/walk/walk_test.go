package walk

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/yagent/yagent/plugins/search/internal/ignore"
)

func collect(t *testing.T, root string, opts Options) ([]string, []string) {
	t.Helper()
	var mu sync.Mutex
	var got, errs []string
	err := Walk(context.Background(), root, opts, func(e Entry) {
		mu.Lock()
		defer mu.Unlock()
		s := e.Rel
		switch {
		case e.Type&fs.ModeSymlink != 0:
			s += "@"
		case e.Type.IsDir():
			s += "/"
		}
		got = append(got, s)
	}, func(e *Error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, e.Path)
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	slices.Sort(got)
	return got, errs
}

func TestWalk(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for rel, data := range map[string]string{
		".git/HEAD":       "ref: refs/heads/main\n",
		".gitignore":      "build/\n*.o\n",
		"a.go":            "",
		"x.o":             "",
		"build/out.go":    "",
		"sub/b.go":        "",
		"sub/.gitignore":  "!keep.o\n",
		"sub/keep.o":      "",
		".hidden/c.go":    "",
		"sub/.env":        "",
		"deep/er/est.txt": "",
	} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A symbolic link loop: reported, never followed.
	if err := os.Symlink(root, filepath.Join(root, "sub", "loop")); err != nil {
		t.Fatal(err)
	}

	got, errs := collect(t, root, Options{Ignore: ignore.NewTree()})
	want := []string{"a.go", "deep/er/est.txt", "sub/b.go", "sub/keep.o", "sub/loop@"}
	if !slices.Equal(got, want) || len(errs) != 0 {
		t.Errorf("Walk with ignore files = %q (errors %q), want %q", got, errs, want)
	}

	got, _ = collect(t, root, Options{Hidden: true, Dirs: true})
	want = []string{".git/", ".git/HEAD", ".gitignore", ".hidden/", ".hidden/c.go", "a.go", "build/", "build/out.go", "deep/", "deep/er/",
		"deep/er/est.txt", "sub/", "sub/.env", "sub/.gitignore", "sub/b.go", "sub/keep.o", "sub/loop@", "x.o"}
	if !slices.Equal(got, want) {
		t.Errorf("Walk without ignore files, hidden included = %q, want %q", got, want)
	}

	got, _ = collect(t, root, Options{Ignore: ignore.NewTree(), Filter: func(rel string, isDir bool) bool {
		return isDir || filepath.Ext(rel) == ".go"
	}})
	want = []string{"a.go", "sub/b.go"}
	if !slices.Equal(got, want) {
		t.Errorf("Walk with a filter = %q, want %q", got, want)
	}

	got, _ = collect(t, filepath.Join(root, "x.o"), Options{Ignore: ignore.NewTree()})
	if want := []string{"x.o"}; !slices.Equal(got, want) {
		t.Errorf("Walk of an ignored file given as root = %q, want %q", got, want)
	}
}

func TestWalkUnreadableDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	locked := filepath.Join(root, "locked")
	if err := os.MkdirAll(locked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(locked, "f.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	_, openErr := os.ReadDir(locked)

	got, errs := collect(t, root, Options{})
	if openErr == nil {
		// Running as root: permissions do not stop the read.
		if !slices.Equal(got, []string{"locked/f.txt"}) || len(errs) != 0 {
			t.Errorf("readable locked dir: got %q errors %q", got, errs)
		}
		return
	}
	if len(got) != 0 || !slices.Equal(errs, []string{locked}) {
		t.Errorf("unreadable dir: got %q errors %q, want the dir reported as an error", got, errs)
	}
}

func TestWalkCancelled(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for i := range 50 {
		if err := os.MkdirAll(filepath.Join(root, "d", string(rune('a'+i%26)), "x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Walk(ctx, root, Options{}, func(Entry) {}, nil); err == nil {
		t.Errorf("Walk with a cancelled context returned nil")
	}
}
