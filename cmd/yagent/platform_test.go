package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// TestWindows_EveryCommandRefused: on Windows every command says at once
// that the host does not run there and what to do instead; --version
// still answers.
func TestWindows_EveryCommandRefused(t *testing.T) {
	defer func(os string) { hostOS = os }(hostOS)
	hostOS = "windows"
	t.Setenv("HOME", t.TempDir())
	for _, args := range [][]string{{"serve"}, {"tools"}, {"doctor"}, {"call", "think", `{"thought":"x"}`}} {
		var out, errOut bytes.Buffer
		err := run(context.Background(), args, strings.NewReader(""), &out, &errOut)
		if !errors.Is(err, errWindows) {
			t.Errorf("yagent %s on windows: err = %v; want the refusal", strings.Join(args, " "), err)
		}
		if out.Len() > 0 {
			t.Errorf("yagent %s on windows wrote %q before refusing", strings.Join(args, " "), out.String())
		}
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--version"}, strings.NewReader(""), &out, &out); err != nil || !strings.Contains(out.String(), "yagent") {
		t.Errorf("yagent --version on windows: %v, %q; want the version", err, out.String())
	}
	if !strings.Contains(errWindows.Error(), "Linux") || !strings.Contains(errWindows.Error(), "macOS") {
		t.Errorf("the refusal %q does not say where yagent runs", errWindows)
	}
}
