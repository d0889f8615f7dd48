package textenc

import (
	"errors"
	"testing"
)

func TestDetectAndRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		raw  string
		enc  Encoding
		text string
	}{
		{"utf-8", "héllo\n", UTF8, "héllo\n"},
		{"utf-8 bom", "\xEF\xBB\xBFhi", UTF8BOM, "hi"},
		{"utf-16le", "\xFF\xFEh\x00\xe9\x00", UTF16LE, "hé"},
		{"utf-16be", "\xFE\xFF\x00h\x00\xe9", UTF16BE, "hé"},
		{"utf-16le surrogate pair", "\xFF\xFE\x3d\xd8\x00\xde", UTF16LE, "😀"},
		{"gb18030", "\xc4\xe3\xba\xc3", GB18030, "你好"},
		{"empty", "", UTF8, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			enc, err := Detect([]byte(tt.raw))
			if err != nil || enc != tt.enc {
				t.Fatalf("Detect(%q): got %v, %v; want %v", tt.raw, enc, err, tt.enc)
			}
			text, err := Decode([]byte(tt.raw), enc)
			if err != nil || text != tt.text {
				t.Fatalf("Decode: got %q, %v; want %q", text, err, tt.text)
			}
			back, err := Encode(text, enc)
			if err != nil || string(back) != tt.raw {
				t.Errorf("Encode: got %q, %v; want %q", back, err, tt.raw)
			}
		})
	}
}

func TestDetectRefuses(t *testing.T) {
	t.Parallel()
	if _, err := Detect([]byte("a\x00b")); !errors.Is(err, ErrBinary) {
		t.Errorf("NUL bytes: got %v, want ErrBinary", err)
	}
	_, err := Detect([]byte("ok\n\xff\xfe\xfd"))
	var ue *UndecodableError
	if !errors.As(err, &ue) || ue.Offset != 3 || ue.Byte != 0xff || ue.Line != 2 {
		t.Errorf("undecodable: got %v (%+v), want byte 0xFF at offset 3, line 2", err, ue)
	}
}

func TestEndings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s       string
		style   Style
		uniform bool
	}{
		{"a\r\nb\r\n", CRLF, true},
		{"a\r\nb", CRLF, true},
		{"a\nb\n", LF, false},
		{"a\r\nb\n", Mixed, false},
		{"a\r\nb\rc\r\n", Mixed, false},
		{"a\rb\r", CR, false},
		{"abc", NoEndings, false},
		{"\r\n", CRLF, true},
		{"\n\r\n", Mixed, false},
	}
	for _, tt := range tests {
		if got := CountEndings(tt.s).Style(); got != tt.style {
			t.Errorf("Style(%q): got %v, want %v", tt.s, got, tt.style)
		}
		if got := IsUniformCRLF(tt.s); got != tt.uniform {
			t.Errorf("IsUniformCRLF(%q): got %v, want %v", tt.s, got, tt.uniform)
		}
	}
	if got := ToCRLF("a\nb\r\nc\n"); got != "a\r\nb\r\nc\r\n" {
		t.Errorf("ToCRLF: got %q", got)
	}
	if got := Apply("a\r\nb\n", CR); got != "a\rb\r" {
		t.Errorf("Apply CR: got %q", got)
	}
	for path, want := range map[string]Style{"x.bat": CRLF, "X.CMD": CRLF, "x.ps1": LF, "x.go": LF} {
		if got := NewFileStyle(path); got != want {
			t.Errorf("NewFileStyle(%s): got %v, want %v", path, got, want)
		}
	}
}

func TestSniff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		head   string
		atEOF  bool
		enc    Encoding
		binary bool
	}{
		{"text", "hello\n", true, UTF8, false},
		{"cut rune at the end of a partial head", "hello \xe4\xbd", false, UTF8, false},
		{"png", "\x89PNG\r\n\x1a\n\x00\x00", true, 0, true},
		{"utf-16 bom with NULs", "\xFF\xFEa\x00", true, UTF16LE, false},
		{"gb18030", "\xc4\xe3\xba\xc3", true, GB18030, false},
		{"control noise", "\x01\x02\x03\x04\x05\x06\x07\x0e\x0f\x10\xff", true, 0, true},
	}
	for _, tt := range tests {
		enc, binary, _ := Sniff([]byte(tt.head), tt.atEOF)
		if binary != tt.binary || (!binary && enc != tt.enc) {
			t.Errorf("Sniff(%s): got %v binary=%v, want %v binary=%v", tt.name, enc, binary, tt.enc, tt.binary)
		}
	}
}
