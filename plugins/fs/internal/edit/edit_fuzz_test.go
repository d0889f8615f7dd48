package edit

import (
	"errors"
	"strings"
	"testing"

	"github.com/yagent/yagent/plugins/fs/internal/textenc"
	"github.com/yagent/yagent/sdk"
)

// FuzzApply feeds random files and edits to Apply. It must not panic; a
// refusal is a tool error with one of the edit codes; an applied edit keeps
// every byte of the file outside the lines its old_string could cover and
// puts new_string in (as written, or with the conversion its repairs name).
//
//	go test -run '^$' -fuzz '^FuzzApply$' -fuzztime 3m ./plugins/fs/internal/edit
func FuzzApply(f *testing.F) {
	seeds := []struct {
		content, old, new string
		all               bool
	}{
		{"a\nb\nc\n", "b\n", "B\n", false},
		{"x x x", "x", "y", true},
		{"aaa", "aa", "b", true},
		{"one\r\ntwo\r\nthree\r\n", "two\nthree\n", "2\n3\n", false},
		{"one\r\ntwo\r\n", "two", "2\nzwei", false},
		{"a\r\nb\nc\r\n", "b\n", "B\n", false},
		{"func f() {\n\tif x {\n\t\treturn\n\t}\n}\n", "    if x {\n        return\n    }\n", "    if y {\n        return\n    }\n", false},
		{"func f() {\n\tcall()  \n}\n", "\tcall()\n", "\tcall2()\n", false},
		{"s := \"a\"\nt := 1\n", `s := \"a\"\nt := 1`, `s := \"b\"\nt := 2`, false},
		{"say \u201chi\u201d now\n", `say "hi" now`, `say "bye" now`, false},
		{"x\u2026y\n", "x...y", "z", false},
		{"dup\nmid\ndup\n", "dup\n", "DUP\n", false},
		{"  dup\nmid\ndup  \n", "dup", "DUP", false},
		{"", "a", "b", false},
		{"abc", "", "x", false},
		{"abc", "abc", "abc", false},
	}
	for _, s := range seeds {
		f.Add(s.content, s.old, s.new, s.all)
	}
	f.Fuzz(func(t *testing.T, content, old, new string, all bool) {
		req := Request{Old: old, New: new, ReplaceAll: all}
		out, err := Apply(content, req)
		if err != nil {
			var te *sdk.ToolError
			if !errors.As(err, &te) {
				t.Fatalf("Apply(%q, %+v): error %v is not a tool error", content, req, err)
			}
			switch te.Code {
			case sdk.CodeInvalidInput, sdk.CodeSearchNotFound, sdk.CodeSearchNotUnique:
			default:
				t.Fatalf("Apply(%q, %+v): code %q", content, req, te.Code)
			}
			if strings.TrimSpace(te.Message) == "" {
				t.Fatalf("Apply(%q, %+v): a %s refusal with no message", content, req, te.Code)
			}
			return
		}
		if Validate(req) != nil {
			t.Fatalf("Apply(%q, %+v) applied a request Validate refuses", content, req)
		}
		if out.Replacements < 1 {
			t.Fatalf("Apply(%q, %+v): %d replacements", content, req, out.Replacements)
		}
		if lines := strings.Count(content, "\n") + 1; out.Line < 1 || out.Line > lines {
			t.Fatalf("Apply(%q, %+v): line %d of a %d-line text", content, req, out.Line, lines)
		}

		kinds := map[string]bool{}
		endings := ""
		for _, r := range out.Repairs {
			kinds[r.Kind] = true
			if r.Kind == KindLineEndings {
				endings = r.Detail
			}
		}
		relaxedMatch := kinds[KindWhitespace] || kinds[KindJSONEscape] || kinds[KindUnicode]

		// What was put in: new_string as written, or converted as reported.
		put := new
		switch endings {
		case CRLFApplied:
			put = textenc.ToCRLF(new)
		case CRLFNormalized:
			put = textenc.ToCRLF(textenc.ToLF(new))
		}
		if kinds[KindJSONEscape] && !strings.Contains(new, "\n") {
			if u, ok := unescapeJSON(new); ok {
				put = u
				if endings == CRLFNormalized {
					put = textenc.ToCRLF(u)
				}
			}
		}

		if !relaxedMatch {
			// An exact match (or the uniform-CRLF fallback): the result is
			// plain string replacement, computed here independently.
			want := ""
			switch endings {
			case CRLFNormalized:
				want = textenc.ToCRLF(replaceN(textenc.ToLF(content), textenc.ToLF(old), textenc.ToLF(new), all))
			default:
				want = replaceN(content, old, put, all)
			}
			if out.Content != want {
				t.Fatalf("Apply(%q, %+v) = %q (repairs %v); want %q", content, req, out.Content, out.Repairs, want)
			}
			return
		}
		if all {
			t.Fatalf("Apply(%q, %+v): replace_all matched with relaxation %v", content, req, out.Repairs)
		}
		if out.Replacements != 1 {
			t.Fatalf("Apply(%q, %+v): a relaxed match replaced %d places", content, req, out.Replacements)
		}
		if !kinds[KindReindent] && !strings.Contains(out.Content, put) {
			t.Fatalf("Apply(%q, %+v) = %q (repairs %v): new text %q is not in the result", content, req, out.Content, out.Repairs, put)
		}
		// The lines before the match and the lines after the last one
		// old_string (unescaped, if it was) could span are untouched.
		span := strings.Count(old, "\n")
		if u, ok := unescapeJSON(old); ok {
			span = max(span, strings.Count(u, "\n"))
		}
		head := content[:lineStart(content, out.Line)]
		tail := content[lineStart(content, out.Line+span+1):]
		if !strings.HasPrefix(out.Content, head) || !strings.HasSuffix(out.Content[len(head):], tail) {
			t.Fatalf("Apply(%q, %+v) = %q (repairs %v): text outside lines %d-%d changed",
				content, req, out.Content, out.Repairs, out.Line, out.Line+span)
		}
	})
}

// replaceN replaces the first occurrence of old, or all of them.
func replaceN(s, old, new string, all bool) string {
	if all {
		return strings.ReplaceAll(s, old, new)
	}
	return strings.Replace(s, old, new, 1)
}

// lineStart is the offset where 1-based line n starts, len(s) past the end.
func lineStart(s string, n int) int {
	off := 0
	for range n - 1 {
		i := strings.IndexByte(s[off:], '\n')
		if i < 0 {
			return len(s)
		}
		off += i + 1
	}
	return off
}
