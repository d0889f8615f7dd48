package audit

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/yagent/yagent/internal/jsonstr"
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

// Redactor writes a call's arguments as the log holds them; its key makes
// the content digests.
type Redactor struct {
	key []byte
}

// NewRedactor returns a Redactor digesting content with key.
func NewRedactor(key []byte) *Redactor { return &Redactor{key: key} }

// appendArgs appends args as the decision line holds them: a JSON object,
// its keys sorted, each value as appendRedacted writes it.
func (r *Redactor) appendArgs(b []byte, args map[string]any, roles map[string]sdk.Role) []byte {
	return r.appendObject(b, args, func(k string) sdk.Role { return roles[k] }, false)
}

// appendObject appends m as a JSON object, its keys sorted, each value as
// appendRedacted writes it with the role roleOf gives its key; a content
// field's value, or any under content, is all content.
func (r *Redactor) appendObject(b []byte, m map[string]any, roleOf func(key string) sdk.Role, content bool) []byte {
	var small [16]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, k)
		b = append(b, ':')
		b = r.appendRedacted(b, m[k], roleOf(k), content || slices.Contains(contentFields, k))
	}
	return append(b, '}')
}

// appendRedacted appends the argument value v as the log holds it, and is
// the one place that decides what of an argument is a secret and how it is
// masked. A string that is content (under a content field, at any depth)
// or longer than maxPlain becomes its keyed digest and length; a path
// role's string stays as it is; a URL role's loses its credentials
// (RedactURL); any other string loses the secret shapes of a command line
// (RedactCommand). Arrays and objects are walked (object keys sorted, a
// content field's value all content), numbers, booleans and null written
// as they are; any other type is redacted as what it encodes to.
func (r *Redactor) appendRedacted(b []byte, v any, role sdk.Role, content bool) []byte {
	switch x := v.(type) {
	case string:
		switch {
		case content || len(x) > maxPlain:
			return r.appendDigest(b, x)
		case role == sdk.RolePathRead || role == sdk.RolePathWrite:
			return jsonstr.Append(b, x)
		case role == sdk.RoleURL:
			return jsonstr.Append(b, RedactURL(x))
		}
		return jsonstr.Append(b, RedactCommand(x))
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = r.appendRedacted(b, e, role, content)
		}
		return append(b, ']')
	case map[string]any:
		return r.appendObject(b, x, func(string) sdk.Role { return role }, content)
	}
	if out, ok := appendScalar(b, v); ok {
		return out
	}
	j, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	var decoded any
	if err := d.Decode(&decoded); err != nil {
		return append(b, "null"...)
	}
	return r.appendRedacted(b, decoded, role, content)
}

// appendDigest appends content s as the log holds it: {"hmac": the first
// 16 bytes of HMAC-SHA256(key, s) in hex, "len": its length in bytes}, a
// digest that cannot be reversed by guessing without the install's key.
func (r *Redactor) appendDigest(b []byte, s string) []byte {
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte(s))
	var sum [sha256.Size]byte
	b = append(b, `{"hmac":"`...)
	b = hex.AppendEncode(b, m.Sum(sum[:0])[:16])
	b = append(b, `","len":`...)
	b = strconv.AppendInt(b, int64(len(s)), 10)
	return append(b, '}')
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
