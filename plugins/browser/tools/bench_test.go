package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/yagent/yagent/sdk"
)

// BenchmarkBrowserNavigateSnapshotClick measures one round of the common
// loop on a warm browser and a local page: open a page, read it, click a
// link to a second page (each step returns a snapshot).
func BenchmarkBrowserNavigateSnapshotClick(b *testing.B) {
	needBrowser(b)
	tools := map[string]sdk.Tool{}
	for _, tool := range All(shared) {
		tools[tool.Spec().Name] = tool
	}
	workspace := b.TempDir()
	call := func(name string, input any) string {
		raw, _ := json.Marshal(input)
		ctx := sdk.WithCall(context.Background(), sdk.CallInfo{SessionID: "bench", Tool: name, Workspace: workspace})
		res, err := tools[name].Call(ctx, raw)
		if err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		return res.Text
	}
	round := func() {
		call(NavigateName, map[string]any{"url": site.URL + "/"})
		snap := call(SnapshotName, nil)
		if res := call(ClickName, map[string]any{"ref": refOf(b, snap, `link "Next page"`)}); !strings.Contains(res, "Second page") {
			b.Fatalf("the click did not reach the second page:\n%s", res)
		}
	}
	round() // starts the browser
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		round()
	}
}
