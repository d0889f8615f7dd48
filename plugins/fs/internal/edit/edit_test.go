package edit

import (
	"slices"
	"strings"
	"testing"

	"github.com/yagent/yagent/sdk"
)

func kinds(reps []Repair) []string {
	var out []string
	for _, r := range reps {
		out = append(out, r.Kind+":"+strings.Fields(r.Detail)[0])
	}
	return out
}

func TestApply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		req     Request
		want    string
		repairs []string // kind:first word of detail
		line    int
	}{
		{name: "exact",
			content: "a\nb\nc\n", req: Request{Old: "b", New: "B"},
			want: "a\nB\nc\n", line: 2},
		{name: "exact replace_all",
			content: "x y x\n", req: Request{Old: "x", New: "z", ReplaceAll: true},
			want: "z y z\n", line: 1},
		{name: "trailing whitespace dropped by the model",
			content: "func f() {   \n\treturn 1\n}\n", req: Request{Old: "func f() {\n\treturn 1\n", New: "func f() {\n\treturn 2\n"},
			want: "func f() {\n\treturn 2\n}\n", repairs: []string{"whitespace_relaxed:trailing"}, line: 1},
		{name: "tabs written as spaces",
			content: "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n",
			req:     Request{Old: "    if x {\n        return 1\n    }\n", New: "    if x {\n        return 2\n    }\n"},
			want:    "func f() {\n\tif x {\n\t\treturn 2\n\t}\n}\n",
			repairs: []string{"whitespace_relaxed:leading", "reindented:new_string"}, line: 2},
		{name: "lost indent level",
			content: "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n",
			req:     Request{Old: "if x {\n\treturn 1\n}\n", New: "if x {\n\tlog()\n\treturn 1\n}\n"},
			want:    "func f() {\n\tif x {\n\t\tlog()\n\t\treturn 1\n\t}\n}\n",
			repairs: []string{"whitespace_relaxed:leading", "reindented:new_string"}, line: 2},
		{name: "extra indent level",
			content: "if x {\n    y()\n}\n",
			req:     Request{Old: "    if x {\n        y()\n", New: "    if x {\n        z()\n"},
			want:    "if x {\n    z()\n}\n",
			repairs: []string{"whitespace_relaxed:leading", "reindented:new_string"}, line: 1},
		{name: "json escaped newlines",
			content: "a := 1\nb := 2\n", req: Request{Old: `a := 1\nb := 2`, New: `a := 1\nb := 3`},
			want: "a := 1\nb := 3\n", repairs: []string{"json_escape_unwrapped:old_string"}, line: 1},
		{name: "curly quotes in the file",
			content: "// It’s “fine” — really\nx\n", req: Request{Old: `// It's "fine" - really`, New: "// fine"},
			want: "// fine\nx\n", repairs: []string{"unicode_normalized:matched"}, line: 1},
		{name: "curly quotes in old_string, partial line",
			content: `say("it's")` + "\n", req: Request{Old: `"it’s"`, New: `"it is"`},
			want: `say("it is")` + "\n", repairs: []string{"unicode_normalized:matched"}, line: 1},
		{name: "crlf exact single line converts new",
			content: "a\r\nb\r\n", req: Request{Old: "a", New: "a1\na2"},
			want: "a1\r\na2\r\nb\r\n", repairs: []string{"line_endings:crlf-applied"}, line: 1},
		{name: "crlf fallback",
			content: "a\r\nb\r\nc\r\n", req: Request{Old: "a\nb\n", New: "x\ny\n"},
			want: "x\r\ny\r\nc\r\n", repairs: []string{"line_endings:crlf-normalized"}, line: 1},
		{name: "crlf file relaxed",
			content: "\tif x {\r\n\t\ty()\r\n\t}\r\n", req: Request{Old: "if x {\n\ty()\n}", New: "if x {\n\tz()\n}"},
			want:    "\tif x {\r\n\t\tz()\r\n\t}\r\n",
			repairs: []string{"whitespace_relaxed:leading", "reindented:new_string", "line_endings:crlf-normalized"}, line: 1},
		{name: "mixed exact hit keeps new as written",
			content: "a\r\nb\nc\n", req: Request{Old: "b", New: "b1\nb2"},
			want: "a\r\nb1\nb2\nc\n", repairs: []string{"line_endings:mixed-not-converted"}, line: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Apply(tt.content, tt.req)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if got.Content != tt.want {
				t.Errorf("Apply: got %q, want %q", got.Content, tt.want)
			}
			if k := kinds(got.Repairs); !slices.Equal(k, tt.repairs) {
				t.Errorf("repairs: got %q (%v), want %q", k, got.Repairs, tt.repairs)
			}
			if got.Line != tt.line {
				t.Errorf("line: got %d, want %d", got.Line, tt.line)
			}
		})
	}
}

func TestApplyRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		content  string
		req      Request
		code     string
		contains []string
	}{
		{name: "empty old", content: "a", req: Request{Old: "", New: "b"}, code: sdk.CodeInvalidInput},
		{name: "same", content: "a", req: Request{Old: "a", New: "a"}, code: sdk.CodeInvalidInput, contains: []string{"identical"}},
		{name: "several exact", content: "x\ny\nx\n", req: Request{Old: "x", New: "z"},
			code: sdk.CodeSearchNotUnique, contains: []string{"2 times", "lines 1, 3", "replace_all"}},
		{name: "several relaxed", content: "  x()\n\n\tx()\n", req: Request{Old: "x() \n", New: "z()\n"},
			code: sdk.CodeSearchNotUnique, contains: []string{"lines 1, 3", "whitespace"}},
		{name: "misremembered line", content: "a()\nb()\nc()\nd()\n", req: Request{Old: "b()\nC()\nd()\n", New: "z\n"},
			code: sdk.CodeSearchNotFound, contains: []string{"line 2", "2 of its 3", "line 3", `"c()"`, `"C()"`}},
		{name: "nothing alike", content: "a\nb\n", req: Request{Old: "zzz", New: "y"},
			code: sdk.CodeSearchNotFound, contains: []string{"None of its lines"}},
		{name: "large block", content: "a\n", req: Request{Old: strings.Repeat("q\n", 41), New: "y"},
			code: sdk.CodeSearchNotFound, contains: []string{"41 lines", "Split it"}},
		{name: "replace_all exact only", content: "  x \n", req: Request{Old: "x\n", New: "y\n", ReplaceAll: true},
			code: sdk.CodeSearchNotFound, contains: []string{"replace_all replaces exact text only"}},
		{name: "mixed endings named", content: "a\r\nb\r\nc\n", req: Request{Old: "a\nb\n", New: "z\n"},
			code: sdk.CodeSearchNotFound, contains: []string{"mixes line endings (2 CRLF, 1 LF"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Apply(tt.content, tt.req)
			te, ok := sdk.AsToolError(err)
			if !ok {
				t.Fatalf("Apply: got %v, want a ToolError %s", err, tt.code)
			}
			if te.Code != tt.code {
				t.Errorf("code: got %s, want %s (%s)", te.Code, tt.code, te.Message)
			}
			for _, c := range tt.contains {
				if !strings.Contains(te.Message, c) {
					t.Errorf("message %q lacks %q", te.Message, c)
				}
			}
		})
	}
}

func TestApplyAllIsAllOrNothing(t *testing.T) {
	t.Parallel()
	content := "a\nb\nc\n"
	_, _, err := ApplyAll(content, []Request{{Old: "a", New: "A"}, {Old: "zz", New: "Z"}})
	te, ok := sdk.AsToolError(err)
	if !ok || te.Code != sdk.CodeSearchNotFound || !strings.Contains(te.Message, "edit 2 of 2") {
		t.Fatalf("ApplyAll: got %v, want search_not_found naming edit 2 of 2", err)
	}
	got, lines, err := ApplyAll(content, []Request{{Old: "a", New: "A"}, {Old: "A\nb", New: "AB"}})
	if err != nil {
		t.Fatalf("ApplyAll: %v", err)
	}
	if got.Content != "AB\nc\n" || !slices.Equal(lines, []int{1, 1}) {
		t.Errorf("ApplyAll: got %q %v, want %q [1 1]", got.Content, lines, "AB\nc\n")
	}
}

func TestValidateSizeLimit(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", maxStringBytes+1)
	if len(big) <= maxStringBytes {
		t.Fatalf("fixture of %d bytes does not exceed the limit %d", len(big), maxStringBytes)
	}
	for _, req := range []Request{{Old: big, New: "y"}, {Old: "y", New: big}} {
		err := Validate(req)
		if te, ok := sdk.AsToolError(err); !ok || te.Code != sdk.CodeInvalidInput || !strings.Contains(te.Message, "over the limit") {
			t.Errorf("Validate(%d/%d bytes): got %v, want invalid_input over the limit", len(req.Old), len(req.New), err)
		}
	}
	if err := Validate(Request{Old: strings.Repeat("x", maxStringBytes), New: "y"}); err != nil {
		t.Errorf("Validate at the limit: %v", err)
	}
}

func TestApplyInconsistentIndentIsNamed(t *testing.T) {
	t.Parallel()
	// One line lost a level, the next did not: no mapping fits both.
	content := "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n"
	got, err := Apply(content, Request{Old: "if x {\n\t\ty()\n}", New: "if x {\n\t\tz()\n}"})
	if err != nil {
		t.Fatal(err)
	}
	if k := kinds(got.Repairs); !slices.Equal(k, []string{"whitespace_relaxed:leading", "reindent_skipped:old_string's"}) {
		t.Errorf("repairs: got %q", k)
	}
	if want := "func f() {\nif x {\n\t\tz()\n}\n}\n"; got.Content != want {
		t.Errorf("content: got %q, want %q", got.Content, want)
	}
}
