package execwatch

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/yagent/yagent/sdk"
)

// rule writes a rule program's file and describes it the way the host does.
func rule(t *testing.T, dir, name string, data []byte) sdk.ExecProgram {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return sdk.ExecProgram{Name: name, Files: []sdk.ProgramFile{{Path: p, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}}}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	body := []byte("\x7fELF pretend program body")
	m := NewMatcher([]sdk.ExecProgram{rule(t, dir, "printenv", body), rule(t, dir, "curl", []byte("another"))})
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o755)
		return p
	}
	same := write("pe", body)
	modified := append([]byte(nil), body...)
	modified[len(modified)-1] ^= 1 // same size, other bytes
	other := write("pe2", modified)
	link := filepath.Join(dir, "ln")
	os.Symlink(filepath.Join(dir, "printenv"), link)

	cases := []struct {
		name string
		e    Exec
		want []string
	}{
		{"by name", Exec{Path: "/usr/bin/printenv"}, []string{"printenv"}},
		{"by argv[0]", Exec{Path: other, Argv: []string{"curl"}}, []string{"curl"}},
		{"by interpreter", Exec{Path: other, Interpreters: []string{"/usr/local/bin/printenv"}}, []string{"printenv"}},
		{"byte-identical copy", Exec{Path: same}, []string{"printenv"}},
		{"same size, other bytes", Exec{Path: other}, nil},
		{"same file through a link", Exec{Path: link}, []string{"printenv"}},
		{"unidentified", Exec{Path: other, Unidentified: "a memfd"}, []string{"printenv", "curl"}},
		{"unrelated", Exec{Path: "/usr/bin/true", Argv: []string{"true"}}, nil},
	}
	for _, c := range cases {
		if got := m.Match(c.e); !slices.Equal(got, c.want) {
			t.Errorf("%s: Match(%+v) = %q, want %q", c.name, c.e, got, c.want)
		}
	}
}
