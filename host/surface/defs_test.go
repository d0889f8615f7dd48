package surface

import (
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/sdk"
)

var update = flag.Bool("update", false, "rewrite testdata/defs_hash.golden")

// fixedDefs is the listing the golden hash pins: changing what the hash
// covers, or how, must show up as a changed golden file.
func fixedDefs() []ToolDef {
	return []ToolDef{
		{Name: "write_file", Description: "Create or overwrite a file.", Family: "fs", Tier: toolspec.Warm, Effect: sdk.EffectWrite,
			InputSchema: json.RawMessage(`{"type":"object","required":["path","content"],"properties":{"path":{"type":"string"},"content":{"type":"string"}}}`)},
		{Name: "read_file", Description: "Read a window of lines.", Family: "fs", Tier: toolspec.Warm, Effect: sdk.EffectRead,
			InputSchema: json.RawMessage(`{"properties":{"limit":{"type":"integer","minimum":1},"path":{"type":"string"}},"type":"object"}`)},
		{Name: "agent_exit", Description: "Finish the task.", Family: "host", Tier: toolspec.Hot, Effect: sdk.EffectFlow,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"]}`)},
		{Name: "browser_click", Description: "Click.", Family: "browser", Tier: toolspec.Cold, Effect: sdk.EffectBrowser, Serial: true,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"ref":{"type":"string"},"n":{"type":"number","default":1.50}}}`)},
	}
}

func TestComputeToolDefsHash_Golden(t *testing.T) {
	t.Parallel()
	got := ComputeToolDefsHash(fixedDefs())
	golden := filepath.Join("testdata", "defs_hash.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run Golden -update ./host/surface once)", err)
	}
	if got != strings.TrimSpace(string(want)) {
		t.Fatalf("ComputeToolDefsHash = %s, golden %s: the listing providers see changed; if intended, rerun with -update", got, want)
	}
	if len(got) != 16 {
		t.Fatalf("hash %q: want the hex of 8 bytes", got)
	}
}

func TestComputeToolDefsHash_IgnoresOrder(t *testing.T) {
	t.Parallel()
	defs := fixedDefs()
	want := ComputeToolDefsHash(defs)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		shuffled := slices.Clone(defs)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if got := ComputeToolDefsHash(shuffled); got != want {
			t.Fatalf("hash of %v = %s, want %s", names(shuffled), got, want)
		}
	}
	if !slices.Equal(names(defs), names(fixedDefs())) {
		t.Fatal("ComputeToolDefsHash must sort a copy, not its argument")
	}
}

func TestComputeToolDefsHash_SeesWhatProvidersSee(t *testing.T) {
	t.Parallel()
	base := ComputeToolDefsHash(fixedDefs())
	for _, tc := range []struct {
		name   string
		change func(*ToolDef)
		same   bool
	}{
		{"description", func(d *ToolDef) { d.Description += "!" }, false},
		{"schema", func(d *ToolDef) { d.InputSchema = json.RawMessage(`{"type":"object"}`) }, false},
		{"name", func(d *ToolDef) { d.Name = "read_files" }, false},
		{"schema key order", func(d *ToolDef) {
			d.InputSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"limit":{"minimum":1,"type":"integer"}}}`)
		}, true},
		{"tier", func(d *ToolDef) { d.Tier = toolspec.Cold }, true},
	} {
		defs := fixedDefs()
		tc.change(&defs[1])
		if got := ComputeToolDefsHash(defs); (got == base) != tc.same {
			t.Errorf("%s changed: hash equal = %v, want %v", tc.name, got == base, tc.same)
		}
	}
}

func TestSortToolDefs(t *testing.T) {
	t.Parallel()
	defs := fixedDefs()
	SortToolDefs(defs)
	if got := names(defs); !slices.Equal(got, []string{"agent_exit", "browser_click", "read_file", "write_file"}) {
		t.Fatalf("SortToolDefs = %v", got)
	}
}

func TestToolDef_JSONSaysTheTierInWords(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(fixedDefs()[0])
	if err != nil || !strings.Contains(string(b), `"tier":"warm"`) || !strings.Contains(string(b), `"name":"write_file"`) {
		t.Fatalf("json = %s, %v", b, err)
	}
}
