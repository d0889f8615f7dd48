package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckHTTPAddr_LoopbackUnlessTLSOrProxy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		hf     httpFlags
		wantOK bool
		want   string // in the error
	}{
		{httpFlags{addr: "127.0.0.1:7777"}, true, ""},
		{httpFlags{addr: "127.0.0.2:0"}, true, ""},
		{httpFlags{addr: "[::1]:7777"}, true, ""},
		{httpFlags{addr: "localhost:7777"}, true, ""},
		{httpFlags{addr: "0.0.0.0:7777"}, false, "--allow-remote"},
		{httpFlags{addr: ":7777"}, false, "--tls-cert"},
		{httpFlags{addr: "192.0.2.1:7777"}, false, "not a loopback address"},
		{httpFlags{addr: "example.com:7777"}, false, "not a loopback address"},
		{httpFlags{addr: "0.0.0.0:7777", allowRemote: true}, true, ""},
		{httpFlags{addr: "0.0.0.0:7777", tlsCert: "c.pem", tlsKey: "k.pem"}, true, ""},
		{httpFlags{addr: "0.0.0.0:7777", tlsCert: "c.pem"}, false, "together"},
		{httpFlags{addr: "7777"}, false, "host:port"},
	} {
		_, err := checkHTTPAddr(tc.hf)
		if tc.wantOK != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("checkHTTPAddr(%+v) = %v; want ok=%v, error naming %q", tc.hf, err, tc.wantOK, tc.want)
		}
	}
}

// Not parallel: it sets the process environment.
func TestHTTPToken_StrippedFromTheEnvironment(t *testing.T) {
	t.Setenv(tokenEnv, " from-env\n")
	tok, from, err := httpToken(httpFlags{})
	if err != nil || tok != "from-env" || from != tokenFromEnv {
		t.Fatalf("httpToken with $%s: got %q from %q err=%v, want from-env from the environment", tokenEnv, tok, from, err)
	}
	if v, ok := os.LookupEnv(tokenEnv); ok {
		t.Fatalf("$%s is still set (%q) after serve read it: plugins and their commands would inherit it", tokenEnv, v)
	}

	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(tokenEnv, "from-env")
	tok, from, err = httpToken(httpFlags{tokenFile: file})
	if err != nil || tok != "from-file" || from != tokenFromFile {
		t.Fatalf("httpToken with --token-file: got %q from %q, %v; want from-file from the file", tok, from, err)
	}
	if _, ok := os.LookupEnv(tokenEnv); ok {
		t.Fatalf("$%s is still set after --token-file was read", tokenEnv)
	}

	if err := os.WriteFile(file, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := httpToken(httpFlags{tokenFile: file}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("httpToken with an empty --token-file: got %v, want an error saying it is empty", err)
	}

	a, from, err := httpToken(httpFlags{})
	b, _, _ := httpToken(httpFlags{})
	if err != nil || from != tokenFromGenerated || len(a) != 43 || a == b {
		t.Fatalf("generated tokens: %q, %q (from %q, err=%v); want two different generated 43-character base64url tokens", a, b, from, err)
	}
}
