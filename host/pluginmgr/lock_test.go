package pluginmgr

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLock_WriteReadVerify(t *testing.T) {
	t.Parallel()
	sum := func(c string) string { return strings.Repeat(c, 64) }
	path := filepath.Join(t.TempDir(), "sub", "plugins.lock")

	l, err := ReadLock(path)
	if err != nil || len(l.Plugins) != 0 {
		t.Fatalf("ReadLock of a missing file: %+v, %v; want an empty lock", l, err)
	}
	a := &Plugin{Name: "a", Path: "/p/yagent-plugin-a", SHA256: sum("a")}
	b := &Plugin{Name: "b", Path: "/p/yagent-plugin-b", SHA256: sum("b")}
	if err := WriteLock(path, []*Plugin{a, b}); err != nil {
		t.Fatal(err)
	}
	// Re-pinning b keeps a's entry.
	b2 := &Plugin{Name: "b", Path: "/q/yagent-plugin-b", SHA256: sum("c")}
	if err := WriteLock(path, []*Plugin{b2}); err != nil {
		t.Fatal(err)
	}
	l, err = ReadLock(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]LockEntry{"a": {SHA256: sum("a"), Path: a.Path}, "b": {SHA256: sum("c"), Path: b2.Path}}
	if !reflect.DeepEqual(l.Plugins, want) {
		t.Fatalf("lock after two writes: %+v, want %+v", l.Plugins, want)
	}

	verdicts := l.Verify([]*Plugin{a, b, {Name: "c", SHA256: sum("d")}}, nil)
	got := map[string]PinStatus{}
	for _, v := range verdicts {
		got[v.Name] = v.Status
	}
	wantStatus := map[string]PinStatus{"a": PinOK, "b": PinMismatch, "c": PinNone}
	if !reflect.DeepEqual(got, wantStatus) {
		t.Errorf("Verify: %v, want %v", got, wantStatus)
	}
	if v := l.Verify(nil, nil); len(v) != 2 || v[0].Status != PinMissing {
		t.Errorf("Verify with no plugins: %+v, want both entries missing", v)
	}

	if pinned, err := l.Check("b", b.Path, sum("b")); pinned || err == nil ||
		!strings.Contains(err.Error(), sum("b")) || !strings.Contains(err.Error(), sum("c")) {
		t.Errorf("Check(b, old sum): %v, %v; want a mismatch naming both sums", pinned, err)
	}
}

func TestReadLock_RejectsBadFiles(t *testing.T) {
	t.Parallel()
	for name, content := range map[string]string{
		"not json":      "{",
		"bad sum":       `{"plugins":{"x":{"sha256":"ABC"}}}`,
		"unknown shape": `{"plugins":["x"]}`,
	} {
		path := filepath.Join(t.TempDir(), "lock")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadLock(path); err == nil {
			t.Errorf("ReadLock(%s): no error", name)
		}
	}
}
