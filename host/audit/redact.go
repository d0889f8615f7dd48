package audit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"

	"github.com/yagent/yagent/sdk"
)

// Redacted replaces a secret the log must not hold.
const Redacted = "<redacted>"

// maxPlain is the longest string argument kept as text; a longer one is
// content, whatever its field.
const maxPlain = 256

// contentFields carry what is written or typed: never logged, only their
// digest and length.
var contentFields = []string{"content", "new_string", "old_string", "text", "input", "edits"}

// Digest is a content value as the log holds it: a keyed digest that
// cannot be reversed by guessing without the install's key.
type Digest struct {
	HMAC string `json:"hmac"`
	Len  int    `json:"len"`
}

// Redactor turns a call's arguments into what the log holds.
type Redactor struct {
	key []byte
}

// NewRedactor returns a Redactor digesting content with key.
func NewRedactor(key []byte) *Redactor { return &Redactor{key: key} }

// digest is the first 16 bytes of HMAC-SHA256(key, s), in hex.
func (r *Redactor) digest(s string) Digest {
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte(s))
	return Digest{HMAC: hex.EncodeToString(m.Sum(nil)[:16]), Len: len(s)}
}

// Args returns args as the decision line holds them: role arguments kept
// with their secrets redacted, content fields and long strings digested,
// every other string redacted by the same secret shapes.
func (r *Redactor) Args(args map[string]any, roles map[string]sdk.Role) map[string]any {
	if args == nil {
		return nil
	}
	out := make(map[string]any, len(args))
	for k, v := range args {
		content := slices.Contains(contentFields, k)
		out[k] = r.value(v, roles[k], content)
	}
	return out
}

// appendArgs appends args as Args redacts them, as a JSON object with its
// keys sorted, without building the redacted copy.
func (r *Redactor) appendArgs(b []byte, args map[string]any, roles map[string]sdk.Role) []byte {
	var small [16]string
	keys := small[:0]
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendValue(b, r.value(args[k], roles[k], slices.Contains(contentFields, k)))
	}
	return append(b, '}')
}

func (r *Redactor) value(v any, role sdk.Role, content bool) any {
	switch x := v.(type) {
	case string:
		return r.str(x, role, content)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r.value(e, role, content)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = r.value(e, role, content || slices.Contains(contentFields, k))
		}
		return out
	}
	return v
}

func (r *Redactor) str(s string, role sdk.Role, content bool) any {
	if content || len(s) > maxPlain {
		return r.digest(s)
	}
	switch role {
	case sdk.RolePathRead, sdk.RolePathWrite:
		return s
	case sdk.RoleURL:
		return RedactURL(s)
	}
	return RedactCommand(s)
}

// secretWords name an option that takes a secret (--password, --token).
const secretWords = `password|passwd|passphrase|token|secret|api-?key|apikey|access-?key|credentials?`

var (
	urlRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s'"]+`)
	// Authorization: Bearer abc, X-Api-Key: abc, Cookie: a=b
	headerRE = regexp.MustCompile(`(?i)\b((?:proxy-)?authorization|x-api-key|api-key|x-auth-token|cookie|x-amz-security-token)(\s*:\s*)((?:bearer|basic|token|digest|negotiate)\s+)?[^\s'"]+`)
	// --password=x, --token x, --api-key=x, -password x
	optRE     = regexp.MustCompile(`(?i)(^|[\s'"])(--[a-z0-9_-]*(?:` + secretWords + `)[a-z0-9_-]*|-(?:` + secretWords + `)[a-z0-9_-]*)(=|\s+)([^\s'"<]+|'[^']*'|"[^"]*")`)
	optWordRE = regexp.MustCompile(`(?i)^-(?:` + secretWords + `)`)
	// mysql -pSECRET
	shortPRE = regexp.MustCompile(`(^|[\s'"])-p([^\s'"<][^\s'"]*)`)
	// curl -u user:pass, --user user:pass
	userRE = regexp.MustCompile(`(^|[\s'"])(-u|--user|--proxy-user)(\s*|=)([^\s:'"]*):([^\s'"]+)`)
	// API_KEY=abc cmd, export TOKEN=x, db_password=x
	assignRE = regexp.MustCompile(`(^|[\s;|('"` + "`" + `])([A-Z_][A-Z0-9_]*|[A-Za-z_][A-Za-z0-9_]*(?i:key|token|secret|pass|passwd|password|auth|credential)[A-Za-z0-9_]*)=('[^']*'|"[^"]*"|[^\s'";&|)]+)`)
)

// RedactCommand redacts the usual secret shapes in a command line (or any
// short text): URL userinfo and token-like query values, -p<password>,
// --password=x and --token x, -u user:pass, Authorization and other
// credential headers, and NAME=value assignments of environment-like or
// secret-like names.
func RedactCommand(s string) string {
	if s == "" {
		return s
	}
	// Each shape is looked for only where its mark is: the regular
	// expressions cost microseconds, and most arguments hold none.
	colon, dash, eq := strings.IndexByte(s, ':') >= 0, strings.IndexByte(s, '-') >= 0, strings.IndexByte(s, '=') >= 0
	if colon && strings.Contains(s, "://") {
		s = urlRE.ReplaceAllStringFunc(s, RedactURL)
	}
	if colon {
		s = headerRE.ReplaceAllString(s, "${1}${2}${3}"+Redacted)
	}
	if colon && dash && (strings.Contains(s, "-u") || strings.Contains(s, "-user")) {
		s = userRE.ReplaceAllString(s, "${1}${2}${3}${4}:"+Redacted)
	}
	if dash && secretWordIn(s) {
		s = optRE.ReplaceAllString(s, "${1}${2}${3}"+Redacted)
	}
	if dash && strings.Contains(s, "-p") {
		s = redactShortP(s)
	}
	if eq {
		s = assignRE.ReplaceAllString(s, "${1}${2}="+Redacted)
	}
	return s
}

// secretWordIn reports whether s may name a secret option (a cheap test
// before optRE).
func secretWordIn(s string) bool {
	l := strings.ToLower(s)
	for _, w := range []string{"pass", "token", "secret", "key", "credential"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// redactShortP redacts mysql's -pSECRET, leaving -p<redacted> and
// -password's own (optRE's) alone.
func redactShortP(s string) string {
	return shortPRE.ReplaceAllStringFunc(s, func(m string) string {
		lead := ""
		if m[0] != '-' {
			lead = m[:1]
		}
		if rest := m[len(lead)+2:]; strings.HasPrefix(rest, Redacted) || optWordRE.MatchString("-p"+rest) {
			return m // -p<redacted> already, or -password's own
		}
		return lead + "-p" + Redacted
	})
}

// secretParam reports whether a URL query parameter's name looks like it
// carries a credential.
func secretParam(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"token", "key", "secret", "pass", "pwd", "auth", "sig", "credential", "session", "jwt", "code"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// RedactURL redacts a URL's userinfo (the password, or a lone user that is
// a token) and the values of its token-like query parameters; the scheme,
// host, path and other parameters stay.
func RedactURL(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return redactQuery(s)
	}
	rest := s[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	auth := rest[:end]
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		user := auth[:at]
		if u, _, ok := strings.Cut(user, ":"); ok {
			user = u + ":" + Redacted
		} else {
			user = Redacted
		}
		rest = user + auth[at:] + rest[end:]
	}
	return s[:i+3] + redactQuery(rest)
}

func redactQuery(s string) string {
	q := strings.IndexByte(s, '?')
	if q < 0 {
		return s
	}
	query, frag := s[q+1:], ""
	if h := strings.IndexByte(query, '#'); h >= 0 {
		query, frag = query[:h], query[h:]
	}
	parts := strings.Split(query, "&")
	for i, p := range parts {
		if k, _, ok := strings.Cut(p, "="); ok && secretParam(k) {
			parts[i] = k + "=" + Redacted
		}
	}
	return s[:q+1] + strings.Join(parts, "&") + frag
}

// RedactArgv redacts a program's argument vector word by word, the word
// after a secret option included.
func RedactArgv(argv []string) []string {
	if argv == nil {
		return nil
	}
	out := make([]string, len(argv))
	for i, a := range argv {
		if i > 0 && secretOption(argv[i-1]) && !strings.HasPrefix(a, "-") {
			out[i] = Redacted
			continue
		}
		if i > 0 && (argv[i-1] == "-u" || argv[i-1] == "--user") && strings.Contains(a, ":") {
			u, _, _ := strings.Cut(a, ":")
			out[i] = u + ":" + Redacted
			continue
		}
		out[i] = RedactCommand(a)
	}
	return out
}

// secretOption reports whether an option word takes a secret as its next
// word (--password x, --token x).
func secretOption(w string) bool {
	if !strings.HasPrefix(w, "-") || strings.Contains(w, "=") {
		return false
	}
	return optRE.MatchString(w + " x")
}
