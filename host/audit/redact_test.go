package audit

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/yagent/yagent/sdk"
)

// TestRedactCommand: the usual secret shapes in a command line are
// redacted and the rest of the line stays readable.
func TestRedactCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"mysql -p", "mysql -uroot -pSECRET db", "mysql -uroot -p<redacted> db"},
		{"mkdir -p keeps its folder", "mkdir -p build/out", "mkdir -p build/out"},
		{"curl -u", "curl -u user:pass https://h/x", "curl -u user:<redacted> https://h/x"},
		{"curl --user=", "curl --user=alice:hunter2 h", "curl --user=alice:<redacted> h"},
		{"--password=", "pg_dump --password=x db", "pg_dump --password=<redacted> db"},
		{"--token space", "gh auth login --token abc123 --host h", "gh auth login --token <redacted> --host h"},
		{"--api-key quoted", `tool --api-key "k e y" run`, "tool --api-key <redacted> run"},
		{"url userinfo and token param", "curl https://user:pw@host/?token=abc&x=1", "curl https://user:<redacted>@host/?token=<redacted>&x=1"},
		{"url lone token user", "git clone https://ghp_abc@github.com/o/r", "git clone https://<redacted>@github.com/o/r"},
		{"url other params kept", "wget 'http://h/p?page=2&access_key=zz#frag'", "wget 'http://h/p?page=2&access_key=<redacted>#frag'"},
		{"env assignment", "API_KEY=abc cmd --flag", "API_KEY=<redacted> cmd --flag"},
		{"export", "export GITHUB_TOKEN=ghp_x; make", "export GITHUB_TOKEN=<redacted>; make"},
		{"secret-like lower name", "db_password=x ./run", "db_password=<redacted> ./run"},
		{"dd operands kept", "dd if=/dev/zero of=out bs=1M", "dd if=/dev/zero of=out bs=1M"},
		{"bearer header", `curl -H "Authorization: Bearer eyJhbGciOi" https://api/x`, `curl -H "Authorization: Bearer <redacted>" https://api/x`},
		{"api key header", "curl -H 'X-Api-Key: abc' h", "curl -H 'X-Api-Key: <redacted>' h"},
		{"plain command untouched", "go test ./... -run TestX", "go test ./... -run TestX"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := RedactCommand(tt.in); got != tt.want {
				t.Errorf("RedactCommand(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if got := RedactCommand(RedactCommand(tt.in)); got != tt.want {
				t.Errorf("redacting twice gives %q, want %q", got, tt.want)
			}
		})
	}
}

// TestRedactArgv: a secret option's value in the next word goes too.
func TestRedactArgv(t *testing.T) {
	t.Parallel()
	got := strings.Join(RedactArgv([]string{"mysql", "-pSECRET", "--password", "x2", "-u", "root:pw", "API_KEY=abc", "db"}), " ")
	want := "mysql -p<redacted> --password <redacted> -u root:<redacted> API_KEY=<redacted> db"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// redacted is args as the decision line holds them, decoded.
func redacted(t *testing.T, r *Redactor, args map[string]any, roles map[string]sdk.Role) map[string]any {
	t.Helper()
	b := r.appendArgs(nil, args, roles)
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("the args %s are no JSON object: %v", b, err)
	}
	return got
}

// isDigest reports whether v is a digest of 16 bytes in hex and length n.
func isDigest(v any, n int) bool {
	d, ok := v.(map[string]any)
	h, _ := d["hmac"].(string)
	return ok && len(d) == 2 && len(h) == 32 && d["len"] == float64(n)
}

// TestRedactorArgs: role arguments stay (secrets redacted), content fields
// and long strings become a keyed digest and a length.
func TestRedactorArgs(t *testing.T) {
	t.Parallel()
	r := NewRedactor([]byte("k1"))
	long := strings.Repeat("z", maxPlain+1)
	args := map[string]any{
		"path":       "/ws/a.go",
		"url":        "https://u:p@h/?sig=1",
		"command":    "mysql -pS3CRET",
		"content":    "the secret body",
		"new_string": "new",
		"edits":      []any{map[string]any{"old": "a", "new": "b"}},
		"note":       long,
		"n":          float64(3),
		"words":      []string{"API_KEY=abc", "ls"},
	}
	roles := map[string]sdk.Role{"path": sdk.RolePathWrite, "url": sdk.RoleURL, "command": sdk.RoleCommand}
	got := redacted(t, r, args, roles)
	if got["path"] != "/ws/a.go" || got["url"] != "https://u:<redacted>@h/?sig=<redacted>" || got["command"] != "mysql -p<redacted>" || got["n"] != float64(3) {
		t.Errorf("role arguments: %v", got)
	}
	for _, k := range []string{"content", "new_string", "note"} {
		if !isDigest(got[k], len(args[k].(string))) {
			t.Errorf("%s = %#v, want a digest of 16 bytes in hex and the length", k, got[k])
		}
	}
	if w := fmt.Sprint(got["words"]); w != "[API_KEY=<redacted> ls]" {
		t.Errorf("a []string argument logged as %s, want it redacted as the array it encodes to", w)
	}
	e := got["edits"].([]any)[0].(map[string]any)
	if !isDigest(e["old"], 1) {
		t.Errorf("edits[0].old = %#v, want a digest", e["old"])
	}
	// Keyed: another install's key gives another digest of the same text.
	x := map[string]any{"content": "x"}
	if a, b := redacted(t, r, x, nil), redacted(t, NewRedactor([]byte("k2")), x, nil); fmt.Sprint(a) == fmt.Sprint(b) {
		t.Error("the digest does not depend on the key")
	}
}
