package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/yagent/yagent/internal/testbuild"
)

// maxUpFront is the most bytes the up-front tools/list result of the
// profiles with deferred tools on (as shipped) may take: what every
// session pays before its first call. 8 KiB: they were 10.3 KiB
// (bench/manual.md, "Context, round two" and "round three").
const maxUpFront = 8192

// TestListing_UpFrontBytes builds the first-party plugins and measures,
// as go run ./bench/listing does, the tools/list result the profiles full
// and coder answer with as shipped. Each must stay at or under maxUpFront
// bytes, with deferred mode on and the tools they list today.
func TestListing_UpFrontBytes(t *testing.T) {
	dir, err := testbuild.BinDir("yagent-listing-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	plugins := filepath.Join(dir, "plugins")
	if err := testbuild.Build(testbuild.Plugins(plugins)...); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		profile string
		tools   int
	}{{"full", 16}, {"coder", 16}} {
		l, err := measure(c.profile, modes[0], plugins)
		if err != nil {
			t.Fatalf("%s: %v", c.profile, err)
		}
		if !l.deferred {
			t.Errorf("%s: deferred mode is off as shipped", c.profile)
		}
		if len(l.tools) != c.tools {
			t.Errorf("%s: %d tools listed up front, want %d", c.profile, len(l.tools), c.tools)
		}
		if l.result > maxUpFront {
			t.Errorf("%s: the up-front tools/list result is %d bytes, over %d", c.profile, l.result, maxUpFront)
		}
		t.Logf("%s: %d tools, %d bytes", c.profile, len(l.tools), l.result)
	}
}
