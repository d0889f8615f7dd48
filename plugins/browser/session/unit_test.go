package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp/kb"

	"github.com/yagent/yagent/sdk"
)

func TestRefs(t *testing.T) {
	t.Parallel()
	r := newRefs()
	a, b := newTab(false), newTab(false)
	index := func(t *Tab) int {
		switch t {
		case a:
			return 0
		case b:
			return 1
		}
		return -1
	}
	e1 := r.assign(a, 0, 100)
	if again := r.assign(a, 0, 100); again != e1 {
		t.Fatalf("the same node in the same document got %s, then %s", e1, again)
	}
	e2 := r.assign(a, 0, 200)
	onB := r.assign(b, 0, 100)
	if e1 == e2 || e1 == onB {
		t.Fatalf("refs collide: %s %s %s", e1, e2, onB)
	}
	if node, err := r.resolve(e2, a, index); err != nil || node != 200 {
		t.Fatalf("resolve(%s) = %d, %v", e2, node, err)
	}
	cases := []struct {
		name string
		ref  string
		cur  *Tab
		code string
		says string
	}{
		{"another tab's ref", onB, a, CodeStaleRef, "belongs to tab 1"},
		{"never handed out", "e9999", a, CodeStaleRef, "never handed out"},
		{"not a ref", "button", a, sdk.CodeInvalidInput, "e12"},
		{"zero", "e0", a, sdk.CodeInvalidInput, "e12"},
	}
	for _, tc := range cases {
		_, err := r.resolve(tc.ref, tc.cur, index)
		te, ok := sdk.AsToolError(err)
		if !ok || te.Code != tc.code || !strings.Contains(te.Message, tc.says) {
			t.Errorf("%s: resolve(%q) = %v; want %s saying %q", tc.name, tc.ref, err, tc.code, tc.says)
		}
	}
	// A new document in tab a: its old refs are refused, and the new one
	// for the same node is a new number.
	a.gen = 1
	if _, err := r.resolve(e1, a, index); !isStale(err, "older snapshot") {
		t.Fatalf("a ref of the old document: %v", err)
	}
	fresh := r.assign(a, 1, 100)
	if fresh == e1 || fresh == e2 {
		t.Fatalf("a new document reused ref %s", fresh)
	}
	if _, err := r.resolve(e1, a, index); !isStale(err, "older snapshot") {
		t.Fatalf("after the new snapshot, the old ref: %v", err)
	}
	if node, err := r.resolve(fresh, a, index); err != nil || node != 100 {
		t.Fatalf("resolve(%s) = %d, %v", fresh, node, err)
	}
	r.forget(b)
	if _, err := r.resolve(onB, b, index); !isStale(err, "older snapshot") {
		t.Fatalf("a closed tab's ref: %v", err)
	}
}

func isStale(err error, says string) bool {
	te, ok := sdk.AsToolError(err)
	return ok && te.Code == CodeStaleRef && strings.Contains(te.Message, says) && strings.Contains(te.Message, "browser_snapshot")
}

func TestParseKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		combo string
		mods  []string
		key   string
		bad   bool
	}{
		{"Enter", nil, kb.Enter, false},
		{"enter", nil, kb.Enter, false},
		{"ArrowDown", nil, kb.ArrowDown, false},
		{"PageUp", nil, kb.PageUp, false},
		{"F5", nil, kb.F5, false},
		{"Escape", nil, kb.Escape, false},
		{"Esc", nil, kb.Escape, false},
		{"Tab", nil, kb.Tab, false},
		{"Backspace", nil, kb.Backspace, false},
		{"Space", nil, " ", false},
		{"a", nil, "a", false},
		{"+", nil, "+", false},
		{"Control+a", []string{"control"}, "a", false},
		{"Ctrl+Shift+ArrowLeft", []string{"ctrl", "shift"}, kb.ArrowLeft, false},
		{"Shift++", []string{"shift"}, "+", false},
		{"Shift", nil, kb.Shift, false},
		{"Hyperdrive", nil, "", true},
		{"Foo+a", nil, "", true},
	}
	for _, tc := range cases {
		mods, key, err := parseKey(tc.combo)
		if tc.bad {
			if te, ok := sdk.AsToolError(err); !ok || te.Code != sdk.CodeInvalidInput || !strings.Contains(te.Message, "Enter") {
				t.Errorf("parseKey(%q): %v, want invalid_input naming the keys", tc.combo, err)
			}
			continue
		}
		if err != nil || string(key) != tc.key || strings.Join(mods, ",") != strings.Join(tc.mods, ",") {
			t.Errorf("parseKey(%q) = %v, %q, %v; want %v, %q", tc.combo, mods, key, err, tc.mods, tc.key)
		}
	}
}

func TestScreenshotName(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		in, want string
		renamed  bool
	}{
		{"shot.png", "shot.png", false},
		{"shot", "shot.png", true},
		{"../../etc/passwd", "passwd.png", true},
		{"/abs/dir/x.PNG", "x.png", true},
		{`C:\Users\x\y.jpg`, "y.png", true},
		{"we ird name!.png", "we-ird-name.png", true},
		{"report.v2", "report.v2.png", true},
		{"..", "page-20260102-030405.000.png", true},
		{"", "page-20260102-030405.000.png", false},
		{".hidden", "hidden.png", true},
		{strings.Repeat("a", 300), strings.Repeat("a", 100) + ".png", true},
	}
	for _, tc := range cases {
		got, renamed := ScreenshotName(tc.in, now)
		if got != tc.want || renamed != tc.renamed {
			t.Errorf("ScreenshotName(%q) = %q, %v; want %q, %v", tc.in, got, renamed, tc.want, tc.renamed)
		}
		if strings.ContainsAny(got, `/\`) {
			t.Errorf("ScreenshotName(%q) = %q has a separator", tc.in, got)
		}
	}
}

func TestTabsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := statePath(dir, "sess/../../evil")
	if !strings.HasPrefix(path, filepath.Join(dir, "sessions")+string(filepath.Separator)) || strings.Contains(path, "..") {
		t.Fatalf("statePath of a hostile id: %s", path)
	}
	path = statePath(dir, "s1")
	if st, err := loadTabs(path); err != nil || len(st.Tabs) != 0 {
		t.Fatalf("no file: %+v, %v", st, err)
	}
	want := savedTabs{Tabs: []savedTab{{URL: "http://a/", Title: "A"}, {URL: "http://b/"}}, Current: 1}
	if err := saveTabs(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := loadTabs(path)
	if err != nil || len(got.Tabs) != 2 || got.Tabs[1].URL != "http://b/" || got.Current != 1 {
		t.Fatalf("loadTabs = %+v, %v", got, err)
	}
	for p, mode := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700, filepath.Dir(filepath.Dir(path)): 0o700} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != mode {
			t.Errorf("%s: mode %v (%v), want %v", p, st.Mode().Perm(), err, mode)
		}
	}
	if err := os.WriteFile(path, []byte(`{"tabs":[{"url":"x"}],"current":9}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := loadTabs(path); err != nil || got.Current != 0 {
		t.Fatalf("an out-of-range current: %+v, %v", got, err)
	}
	if err := removeTabs(path); err != nil {
		t.Fatal(err)
	}
	if err := removeTabs(path); err != nil {
		t.Fatalf("removing twice: %v", err)
	}
	if err := saveTabs("", want); err != nil {
		t.Fatalf("no state folder: %v", err)
	}
}

func TestOptionsFrom(t *testing.T) {
	t.Setenv("YAGENT_STATE_DIR", "/from/env")
	o := OptionsFrom(map[string]string{SettingChromium: " /opt/chrome ", SettingDialogs: "Dismiss", SettingActionTimeoutMS: "1500"})
	if o.Chromium != "/opt/chrome" || !o.DismissDialogs || o.ActionTimeout != 1500*time.Millisecond || o.StateDir != "/from/env" {
		t.Fatalf("OptionsFrom = %+v", o)
	}
	if o := OptionsFrom(map[string]string{SettingStateDir: "/set"}); o.StateDir != "/set" || o.DismissDialogs {
		t.Fatalf("OptionsFrom(state_dir) = %+v", o)
	}
}

func TestConsoleText(t *testing.T) {
	t.Parallel()
	if got := quoteLine("a\n  b", 10); got != `"a b"` {
		t.Fatalf("quoteLine = %s", got)
	}
	if got, used := applyFormat("%s is %d%% done%c", nil); got != "%s is %d% done%c" || used != 0 {
		t.Fatalf("applyFormat without args = %q, %d", got, used)
	}
}
