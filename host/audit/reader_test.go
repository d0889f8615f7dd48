package audit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fixture is testdata/reader: two rotated files and the live one, whose
// second line is corrupt and whose last line is torn, and audit-old.jsonl,
// named out of the format, which is no log file.
const fixture = "testdata/reader"

// readAll reads dir through f and returns the lines as "call/kind" and the
// warnings.
func readAll(t *testing.T, dir string, f Filter) (got []string, warns []string) {
	t.Helper()
	r := &Reader{Dir: dir, Filter: f, Warn: func(err error) { warns = append(warns, err.Error()) }}
	err := r.Read(context.Background(), func(l *Line) error {
		got = append(got, l.Call+"/"+l.Kind)
		return nil
	})
	if err != nil {
		t.Fatalf("Read(%s): %v", dir, err)
	}
	return got, warns
}

func TestReadInTimeOrder(t *testing.T) {
	t.Parallel()
	got, warns := readAll(t, fixture, Filter{})
	want := []string{"c1/decision", "c1/call", "c2/decision", "c2/call", "c3/decision", "c3/call", "c4/decision", "c4/call", "c5/approval"}
	if !slices.Equal(got, want) {
		t.Errorf("Read: got %q, want %q (rotated files by name, then audit.jsonl)", got, want)
	}
	if len(warns) != 1 {
		t.Errorf("Read: warnings %q, want one, for the corrupt line", warns)
	}
}

func TestReadKeepsLinesAsStored(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(fixture, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	stored := strings.Split(string(raw), "\n")[2] // c4's call line, with a field this reader does not know
	var l *Line
	r := &Reader{Dir: fixture, Filter: Filter{Code: "timeout"}}
	if err := r.Read(context.Background(), func(x *Line) error { l = x; return nil }); err != nil {
		t.Fatal(err)
	}
	if l == nil {
		t.Fatal("Read(code timeout): no line")
	}
	if string(l.Raw) != stored {
		t.Errorf("Raw: got %s, want the line as stored %s", l.Raw, stored)
	}
	if !strings.HasSuffix(l.File, "audit.jsonl") || l.No != 3 {
		t.Errorf("File:No = %s:%d, want audit.jsonl:3", l.File, l.No)
	}
	if l.Tool != "web_fetch" || l.DurationMS != 30000 || l.Bytes != 64 || l.Allowed == nil || *l.Allowed {
		t.Errorf("decoded %+v, want web_fetch, 30000 ms, 64 bytes, allowed false", l)
	}
}

func TestReadFilters(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		name string
		f    Filter
		want []string
	}{
		{"session whole", Filter{Session: "9d7e4b21-2222-4ccc-8ddd-000000000002"}, []string{"c3/decision", "c3/call", "c4/decision", "c4/call"}},
		{"session prefix", Filter{Session: "5f0c2a9e"}, []string{"c1/decision", "c1/call", "c2/decision", "c2/call", "c5/approval"}},
		{"tool", Filter{Tool: "run_bash"}, []string{"c2/decision", "c2/call", "c5/approval"}},
		{"kind", Filter{Kind: "call"}, []string{"c1/call", "c2/call", "c3/call", "c4/call"}},
		{"decision allow", Filter{Decision: "allow"}, []string{"c1/decision"}},
		{"decision ask", Filter{Decision: "ask"}, []string{"c2/decision", "c4/decision"}},
		{"decision deny", Filter{Decision: "deny"}, []string{"c3/decision"}},
		{"by user", Filter{By: "user"}, []string{"c2/decision"}},
		{"by session pass", Filter{By: "session_pass"}, []string{"c5/approval"}},
		{"by nobody", Filter{By: "nobody"}, []string{"c4/decision"}},
		{"code", Filter{Code: "denied"}, []string{"c3/call"}},
		{"failed", Filter{Failed: true}, []string{"c3/call", "c4/call"}},
		{"since", Filter{Since: at("2026-12-01T10:45:00Z")}, []string{"c3/decision", "c3/call", "c4/decision", "c4/call", "c5/approval"}},
		{"until", Filter{Until: at("2026-12-01T10:45:00Z")}, []string{"c1/decision", "c1/call", "c2/decision", "c2/call"}},
		{"since and until", Filter{Since: at("2026-12-01T09:59:00Z"), Until: at("2026-12-01T11:11:00Z")}, []string{"c2/decision", "c2/call", "c3/decision", "c3/call", "c4/decision"}},
		{"since after every rotated file", Filter{Since: at("2026-12-01T11:00:00Z")}, []string{"c4/decision", "c4/call", "c5/approval"}},
		{"together", Filter{Tool: "web_fetch", Kind: "call", Failed: true}, []string{"c4/call"}},
		{"none", Filter{Tool: "no_such_tool"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, _ := readAll(t, fixture, tc.f)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Read(%+v): got %q, want %q", tc.f, got, tc.want)
			}
		})
	}
}

func TestReadTornLastLineSkipped(t *testing.T) {
	t.Parallel()
	got, warns := readAll(t, fixture, Filter{})
	if slices.Contains(got, "c9/call") {
		t.Errorf("Read: the torn last line came out: %q", got)
	}
	for _, w := range warns {
		if strings.Contains(w, ":5:") {
			t.Errorf("Read: a torn last line of the live file warned: %q (the writer is still writing it)", w)
		}
	}
	// Once the writer ends it, it is a line.
	dir := t.TempDir()
	copyDir(t, fixture, dir)
	appendTo(t, filepath.Join(dir, "audit.jsonl"), `sion":"s9","tool":"read_file"}`+"\n")
	got, _ = readAll(t, dir, Filter{})
	if got[len(got)-1] != "c9/call" {
		t.Errorf("Read after the torn line was ended: got %q, want c9/call last", got)
	}
}

func TestReadTornLastLineOfRotatedFileWarns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyDir(t, fixture, dir)
	appendTo(t, filepath.Join(dir, "audit-20261201T100000.000000000Z.jsonl"), `{"time":"2026-12-01T09:59:30Z","kind":"ca`)
	got, warns := readAll(t, dir, Filter{})
	if len(got) != 9 {
		t.Errorf("Read: got %q, want the 9 whole lines", got)
	}
	if !slices.ContainsFunc(warns, func(w string) bool {
		return strings.Contains(w, "audit-20261201T100000.000000000Z.jsonl:4: line cut short")
	}) {
		t.Errorf("Read: warnings %q, want the rotated file's cut line named at :4", warns)
	}
}

func TestReadCorruptMiddleLineReported(t *testing.T) {
	t.Parallel()
	got, warns := readAll(t, fixture, Filter{})
	want := filepath.Join(fixture, "audit.jsonl") + ":2: not a JSON object"
	if len(warns) != 1 || !strings.HasPrefix(warns[0], want) {
		t.Errorf("Read: warnings %q, want one starting %q", warns, want)
	}
	if !slices.Contains(got, "c4/call") || !slices.Contains(got, "c5/approval") {
		t.Errorf("Read: got %q, want the lines after the corrupt one too", got)
	}
}

func TestReadOverlongLineSkipped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyDir(t, fixture, dir)
	live := filepath.Join(dir, "audit.jsonl")
	raw, _ := os.ReadFile(live)
	long := `{"time":"2026-12-01T11:00:00Z","kind":"call","x":"` + strings.Repeat("a", maxLineBytes) + `"}` + "\n"
	if err := os.WriteFile(live, append([]byte(long), raw...), 0o600); err != nil {
		t.Fatal(err)
	}
	got, warns := readAll(t, dir, Filter{Kind: "approval"})
	if !slices.Equal(got, []string{"c5/approval"}) {
		t.Errorf("Read: got %q, want c5/approval, read past the long line", got)
	}
	if len(warns) != 2 || !strings.Contains(warns[0], "audit.jsonl:1: line over") || !strings.Contains(warns[1], "audit.jsonl:3:") {
		t.Errorf("Read: warnings %q, want the long line at :1 and the corrupt one at :3", warns)
	}
}

func TestReadNoFolder(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "none")
	r := &Reader{Dir: dir}
	err := r.Read(context.Background(), func(*Line) error { return nil })
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Read(missing folder): %v, want an error naming %s", err, dir)
	}
}

func TestReadStopsOnEmitError(t *testing.T) {
	t.Parallel()
	stop := fmt.Errorf("enough")
	n := 0
	r := &Reader{Dir: fixture}
	err := r.Read(context.Background(), func(*Line) error { n++; return stop })
	if err != stop || n != 1 {
		t.Errorf("Read: %v after %d lines, want %v after 1", err, n, stop)
	}
}

func TestFilterCheck(t *testing.T) {
	t.Parallel()
	now := time.Now()
	for _, tc := range []struct {
		f    Filter
		want string // "" = no error
	}{
		{Filter{}, ""},
		{Filter{Kind: "call", Decision: "deny", By: "yolo_pass"}, ""},
		{Filter{Kind: "calls"}, `unknown kind "calls": use one of decision, call, approval`},
		{Filter{Decision: "denied"}, `unknown decision "denied": use one of allow, ask, deny`},
		{Filter{By: "me"}, `unknown by "me"`},
		{Filter{Code: "denied", Failed: true}, "a code and failed together"},
		{Filter{Since: now, Until: now.Add(-time.Hour)}, "is not after since"},
	} {
		err := tc.f.Check()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Check(%+v) = %v, want %q", tc.f, err, tc.want)
		}
	}
}

func TestParseTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{in: "2026-12-01T10:00:00Z", want: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)},
		{in: "2026-12-01T10:00:00.5+01:00", want: time.Date(2026, 12, 1, 9, 0, 0, 5e8, time.UTC)},
		{in: "1h", want: now.Add(-time.Hour)},
		{in: "90s", want: now.Add(-90 * time.Second)},
		{in: "2d", want: now.Add(-48 * time.Hour)},
		{in: "-1h", bad: true},
		{in: "yesterday", bad: true},
		{in: "1.5d", bad: true},
	} {
		got, err := ParseTime(tc.in, now)
		if tc.bad {
			if err == nil || !strings.Contains(err.Error(), "RFC 3339") {
				t.Errorf("ParseTime(%q) = %v, %v; want an error saying what to give", tc.in, got, err)
			}
			continue
		}
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// A rotated file is skipped for --since only when it was rotated before
// that time: a line written in the same instant as the rotation is kept.
func TestReadSinceKeepsTheFileRotatedThen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	line := `{"time":"2026-12-01T11:00:00Z","kind":"call","call":"at"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "audit-20261201T110000.000000000Z.jsonl"), []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	since := time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)
	if got, _ := readAll(t, dir, Filter{Since: since}); !slices.Equal(got, []string{"at/call"}) {
		t.Errorf("Read(since the rotation): got %q, want at/call", got)
	}
	if got, _ := readAll(t, dir, Filter{Since: since.Add(time.Nanosecond)}); got != nil {
		t.Errorf("Read(since after the rotation): got %q, want none", got)
	}
}

// BenchmarkRead reads a folder of 10,000 decision and call lines, as
// `yagent audit --tool` does.
func BenchmarkRead(b *testing.B) {
	dir := b.TempDir()
	var buf bytes.Buffer
	for i := range 10000 {
		t := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond).Format(time.RFC3339Nano)
		if i%2 == 0 {
			fmt.Fprintf(&buf, `{"time":%q,"kind":"decision","call":"c%d","session":"5f0c2a9e-1111-4aaa-8bbb-000000000001","client":"cli","tool":"read_file","family":"fs","effect":"read","trusted":true,"args":{"path":"/ws/src/file%d.go","content":{"hmac":"0f1e2d3c4b5a69788796a5b4c3d2e1f0","len":12}},"decision":"allow","basis":"workspace","paths":["/ws/src/file%d.go"],"allowed":true}`+"\n", t, i, i, i)
		} else {
			fmt.Fprintf(&buf, `{"time":%q,"kind":"call","call":"c%d","session":"5f0c2a9e-1111-4aaa-8bbb-000000000001","client":"cli","tool":"read_file","family":"fs","effect":"read","duration_ms":1.5,"bytes":100,"allowed":true}`+"\n", t, i)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, readLiveName), buf.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	r := &Reader{Dir: dir, Filter: Filter{Tool: "run_bash"}}
	for b.Loop() {
		if err := r.Read(context.Background(), func(*Line) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

func TestReadFieldOfAnotherTypeKeepsTheLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lines := `{"time":"2026-12-01T11:00:00Z","kind":"call","call":"c1","bytes":12.5,"tool":"read_file","code":"timeout"}` + "\n" +
		`{"time":"2026-12-01T11:00:01Z","kind":"call","call":"c2","tool":["read_file"]}` + "\n" +
		`[1,2]` + "\n" + `{"kind":"call"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, readLiveName), []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	got, warns := readAll(t, dir, Filter{})
	if !slices.Equal(got, []string{"c1/call", "c2/call"}) {
		t.Errorf("Read: got %q, want c1/call and c2/call, their odd fields left zero", got)
	}
	if len(warns) != 2 || !strings.Contains(warns[0], ":3: not a JSON object") || !strings.Contains(warns[1], ":4: no time or no kind") {
		t.Errorf("Read: warnings %q, want the array at :3 and the line without a time at :4", warns)
	}
	if got, _ := readAll(t, dir, Filter{Code: "timeout"}); !slices.Equal(got, []string{"c1/call"}) {
		t.Errorf("Read(code timeout): got %q, want c1/call, decoded past its fractional bytes", got)
	}
}
