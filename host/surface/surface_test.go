package surface

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/host/config"
	"github.com/yagent/yagent/host/hosttools"
	"github.com/yagent/yagent/sdk"
)

var quiet = slog.New(slog.DiscardHandler)

// allowAll is a guard that allows every call.
type allowAll struct{}

func (allowAll) Check(context.Context, adapter.GuardRequest) adapter.Decision {
	return adapter.Decision{Action: adapter.Allow}
}

func echoExec(name string) adapter.Executor {
	return adapter.ExecutorFunc(func(context.Context, sdk.CallInfo, json.RawMessage, func(sdk.Progress)) (*sdk.Result, error) {
		return &sdk.Result{Text: "ran " + name}, nil
	})
}

// schemaOf returns an object schema of about size bytes.
func schemaOf(size int) json.RawMessage {
	base := `{"type":"object","properties":{"x":{"type":"string","description":"%s"}}}`
	pad := max(0, size-len(base)+2)
	return json.RawMessage(fmt.Sprintf(base, strings.Repeat("p", pad)))
}

type toolOpt func(*sdk.Spec)

func serial(s *sdk.Spec) { s.Serial = true }

func tool(name, family string, tier toolspec.Tier, schemaBytes int, opts ...toolOpt) *adapter.Adapter {
	spec := sdk.Spec{Name: name, Description: "The " + name + " tool. It does things.", InputSchema: schemaOf(schemaBytes), Effect: sdk.EffectNone}
	for _, o := range opts {
		o(&spec)
	}
	return adapter.New(spec, family, tier, echoExec(name), adapter.Options{Logger: quiet, Trusted: true})
}

func names(defs []ToolDef) []string {
	out := make([]string, len(defs))
	for i, d := range defs {
		out[i] = d.Name
	}
	return out
}

func opts(p *config.Profile) Options {
	return Options{Profile: p, Guard: allowAll{}, Logger: quiet}
}

func TestSurface_DeferredDisabledIsLegacyBehavior(t *testing.T) {
	t.Parallel()
	for _, prof := range []*config.Profile{
		{Name: "off, tiny budget", Deferred: config.DeferredOff, SchemaBudgetBytes: 10},
		{Name: "auto, roomy budget", Deferred: config.DeferredAuto, SchemaBudgetBytes: 1 << 20},
	} {
		t.Run(prof.Name, func(t *testing.T) {
			t.Parallel()
			// The caller pre-fills a load_tool of its own: that must not
			// switch deferred mode on.
			preLoad := tool(toolspec.LoadTool, toolspec.FamilyHost, toolspec.Hot, 50)
			s := NewSurfaceFromAdapters([]*adapter.Adapter{
				tool("hot_one", "fam", toolspec.Hot, 400),
				tool("warm_one", "fam", toolspec.Warm, 400),
				tool("cold_one", "fam", toolspec.Cold, 400),
				preLoad,
			}, opts(prof))
			if s.DeferredOn() {
				t.Fatal("DeferredOn() = true; want legacy mode")
			}
			sess := session.New("s")
			sess.MarkLoaded("cold_one") // pre-filled loaded state changes nothing either
			got := s.List(sess)
			if want := []string{"cold_one", "hot_one", "warm_one"}; !slices.Equal(names(got), want) {
				t.Fatalf("List = %v, want every tool %v and no load_tool", names(got), want)
			}
			for _, d := range got {
				if len(d.InputSchema) < 400 {
					t.Errorf("%s listed without its schema", d.Name)
				}
			}
			if fresh := s.List(session.New("other")); !slices.Equal(names(fresh), names(got)) {
				t.Fatalf("List(fresh session) = %v; legacy mode lists the same for everyone", names(fresh))
			}
			if _, ok := s.Lookup(toolspec.LoadTool); ok {
				t.Fatal("load_tool is served in legacy mode")
			}
			if len(s.Catalog()) != 0 {
				t.Fatalf("Catalog() = %v, want none", s.Catalog())
			}
			if sk := s.Skipped(); len(sk) != 1 || sk[0].Tool != toolspec.LoadTool {
				t.Fatalf("Skipped() = %v; the pre-filled load_tool must be recorded", sk)
			}
			if res := s.Call(t.Context(), session.New("c"), "cold_one", json.RawMessage(`{}`)); res.IsError() {
				t.Fatalf("calling a cold tool in legacy mode: %s %s", res.Code, res.Text)
			}
		})
	}
}

func TestSurface_AutoTurnsOnOverBudget(t *testing.T) {
	t.Parallel()
	ads := []*adapter.Adapter{tool("a", "fam", toolspec.Warm, 3000), tool("b", "fam", toolspec.Cold, 3000)}
	if s := NewSurfaceFromAdapters(ads, opts(&config.Profile{SchemaBudgetBytes: 4000})); !s.DeferredOn() {
		t.Fatal("auto with a listing over budget must turn deferred on")
	}
	if s := NewSurfaceFromAdapters(ads, opts(&config.Profile{SchemaBudgetBytes: 7000})); s.DeferredOn() {
		t.Fatal("auto with a listing under budget must stay off")
	}
	if s := NewSurfaceFromAdapters(ads, opts(nil)); s.DeferredOn() {
		t.Fatal("a nil profile is auto with the 24 KiB default budget")
	}
}

func TestSurface_BudgetDemotesWarmOnly(t *testing.T) {
	t.Parallel()
	build := func(budget int) *Surface {
		return NewSurfaceFromAdapters([]*adapter.Adapter{
			tool("hot_big", "fam", toolspec.Hot, 3000),
			tool("warm_big", "fam", toolspec.Warm, 2000),
			tool("warm_mid", "fam", toolspec.Warm, 1000),
			tool("warm_small", "fam", toolspec.Warm, 300),
			tool("cold_one", "fam", toolspec.Cold, 300),
		}, opts(&config.Profile{Deferred: config.DeferredOn, SchemaBudgetBytes: budget}))
	}
	tiers := func(s *Surface) map[string]toolspec.Tier {
		m := map[string]toolspec.Tier{}
		for _, d := range s.All() {
			m[d.Name] = d.Tier
		}
		return m
	}

	roomy := build(1 << 20)
	if got := names(roomy.List(session.New("s"))); !slices.Equal(got, []string{"hot_big", toolspec.LoadTool, "warm_big", "warm_mid", "warm_small"}) {
		t.Fatalf("roomy List = %v; nothing should be demoted", got)
	}
	full := ListingSize(roomy.List(session.New("s")))

	// Just under the full listing: only the largest Warm schema moves.
	one := build(full - 1500)
	if tr := tiers(one); tr["warm_big"] != toolspec.Cold || tr["warm_mid"] != toolspec.Warm || tr["warm_small"] != toolspec.Warm {
		t.Fatalf("tiers = %v; want only warm_big demoted", tr)
	}
	if size := ListingSize(one.List(session.New("s"))); size > full-1500 {
		t.Fatalf("listing is %d bytes, over the budget %d", size, full-1500)
	}

	// A budget nothing fits: every Warm moves, Hot stays.
	tiny := build(10)
	tr := tiers(tiny)
	for _, n := range []string{"warm_big", "warm_mid", "warm_small"} {
		if tr[n] != toolspec.Cold {
			t.Errorf("%s is %v, want cold", n, tr[n])
		}
	}
	if tr["hot_big"] != toolspec.Hot || tr[toolspec.LoadTool] != toolspec.Hot {
		t.Fatalf("Hot tools demoted: %v", tr)
	}
	if got := names(tiny.List(session.New("s"))); !slices.Equal(got, []string{"hot_big", toolspec.LoadTool}) {
		t.Fatalf("tiny List = %v; want the Hot tools only", got)
	}
	var cat []string
	for _, c := range tiny.Catalog() {
		cat = append(cat, c.Name)
	}
	if !slices.Equal(cat, []string{"cold_one", "warm_big", "warm_mid", "warm_small"}) {
		t.Fatalf("Catalog = %v", cat)
	}
	if len(tiny.Warnings()) == 0 {
		t.Fatal("a listing over budget after demotion must be warned about")
	}
}

func TestSurface_FullYoloRemovesAskUser(t *testing.T) {
	t.Parallel()
	askSpec, askExec := hosttools.AskUserForHelp(nil, nil)
	for _, fullYolo := range []bool{false, true} {
		t.Run(fmt.Sprint("FullYolo=", fullYolo), func(t *testing.T) {
			t.Parallel()
			o := opts(nil)
			o.FullYolo = fullYolo
			viaNew, err := New(nil, o)
			if err != nil {
				t.Fatal(err)
			}
			viaAdapters := NewSurfaceFromAdapters([]*adapter.Adapter{
				adapter.New(askSpec, toolspec.FamilyHost, toolspec.Hot, askExec, adapter.Options{}),
				tool("other", "fam", toolspec.Warm, 100),
			}, o)
			for _, s := range []*Surface{viaNew, viaAdapters} {
				_, served := s.Lookup(toolspec.AskUserForHelp)
				listed := slices.Contains(names(s.List(session.New("s"))), toolspec.AskUserForHelp)
				all := slices.Contains(names(s.All()), toolspec.AskUserForHelp)
				if served == fullYolo || listed == fullYolo || all == fullYolo {
					t.Fatalf("ask_user_for_help served=%v listed=%v all=%v under FullYolo=%v", served, listed, all, fullYolo)
				}
			}
			if _, ok := viaNew.Lookup(toolspec.AgentExit); !ok {
				t.Fatal("agent_exit must stay")
			}
			res := viaNew.Call(t.Context(), session.New("s"), toolspec.AskUserForHelp, json.RawMessage(`{"question":"q"}`))
			if fullYolo != (res.Code == sdk.CodeUnknownTool) {
				t.Fatalf("calling ask_user_for_help under FullYolo=%v: %s", fullYolo, res.Code)
			}
		})
	}
}

func TestSurfaceFromAdapters_ReportsWhatTheLoopAsks(t *testing.T) {
	t.Parallel()
	in := []*adapter.Adapter{
		tool("custom_serial", "custom", toolspec.Warm, 100, serial),
		tool("custom_plain", "custom", toolspec.Warm, 100),
		tool("browser_click", toolspec.FamilyBrowser, toolspec.Warm, 100), // a static name, declared not Serial here
		tool("other_serial", "other", toolspec.Hot, 100, serial),
	}
	s := NewSurfaceFromAdapters(in, opts(&config.Profile{Deferred: config.DeferredOff}))
	listed := s.List(session.New("s"))
	if len(listed) != len(in) {
		t.Fatalf("List = %v, want the %d adapters given", names(listed), len(in))
	}
	for _, a := range in {
		got, ok := s.Lookup(a.Name())
		if !ok || got != a {
			t.Fatalf("Lookup(%s) = %p, %v; want the adapter given", a.Name(), got, ok)
		}
		i := slices.IndexFunc(listed, func(d ToolDef) bool { return d.Name == a.Name() })
		if i < 0 {
			t.Fatalf("%s not listed", a.Name())
		}
		if want := a.Spec().Serial; s.Serial(a.Name()) != want || listed[i].Serial != want {
			t.Errorf("%s: Serial() = %v, listed Serial = %v, adapter Serial = %v; the loop must read the surface's own adapters",
				a.Name(), s.Serial(a.Name()), listed[i].Serial, want)
		}
	}
	if s.Serial("nope") {
		t.Fatal("Serial of an unknown tool must be false")
	}
}

// gated makes executors that report their start and block until release
// is closed, keeping the peak number of calls in flight.
type gated struct {
	started        chan string
	release        chan struct{}
	inFlight, peak atomic.Int32
}

func newGated() *gated {
	return &gated{started: make(chan string, 8), release: make(chan struct{})}
}

func (g *gated) tool(name, family string, isSerial bool) *adapter.Adapter {
	exec := adapter.ExecutorFunc(func(ctx context.Context, info sdk.CallInfo, _ json.RawMessage, _ func(sdk.Progress)) (*sdk.Result, error) {
		n := g.inFlight.Add(1)
		defer g.inFlight.Add(-1)
		for p := g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
		}
		g.started <- info.Tool
		select {
		case <-g.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &sdk.Result{Text: "done"}, nil
	})
	spec := sdk.Spec{Name: name, InputSchema: schemaOf(80), Effect: sdk.EffectNone, Serial: isSerial}
	return adapter.New(spec, family, toolspec.Warm, exec, adapter.Options{Logger: quiet})
}

func call(t *testing.T, wg *sync.WaitGroup, s *Surface, sess *session.Session, name string) {
	wg.Go(func() {
		if res := s.Call(t.Context(), sess, name, json.RawMessage(`{}`)); res.IsError() {
			t.Errorf("%s: %s %s", name, res.Code, res.Text)
		}
	})
}

func TestSurface_SerialCallsOneAtATimePerSessionAndFamily(t *testing.T) {
	t.Parallel()
	g := newGated()
	s := NewSurfaceFromAdapters([]*adapter.Adapter{g.tool("ser_a", "fam", true), g.tool("ser_b", "fam", true)}, opts(nil))
	waiting := make(chan string, 2)
	s.serialWait = func(name string) { waiting <- name }

	sess := session.New("one")
	var wg sync.WaitGroup
	call(t, &wg, s, sess, "ser_a")
	<-g.started
	call(t, &wg, s, sess, "ser_b") // same session and family: must wait for ser_a
	select {
	case n := <-waiting:
		if n != "ser_b" {
			t.Fatalf("%s waited, want ser_b", n)
		}
	case n := <-g.started:
		t.Fatalf("%s started while ser_a of the same session ran", n)
	}
	close(g.release)
	if n := <-g.started; n != "ser_b" {
		t.Fatalf("%s started, want ser_b", n)
	}
	wg.Wait()
	if p := g.peak.Load(); p != 1 {
		t.Fatalf("peak calls in flight = %d, want 1", p)
	}
}

func TestSurface_OtherCallsRunInParallel(t *testing.T) {
	t.Parallel()
	g := newGated()
	s := NewSurfaceFromAdapters([]*adapter.Adapter{
		g.tool("par", "fam", false), g.tool("ser_a", "fam", true), g.tool("ser_other", "other", true),
	}, opts(nil))
	s.serialWait = func(name string) { t.Errorf("%s waited; it must run in parallel", name) }
	var wg sync.WaitGroup
	one := session.New("one")
	call(t, &wg, s, one, "par")
	call(t, &wg, s, one, "par")
	call(t, &wg, s, one, "ser_a")
	call(t, &wg, s, one, "ser_other")            // Serial, but another family
	call(t, &wg, s, session.New("two"), "ser_a") // Serial, but another session
	for range 5 {
		<-g.started // all five are in flight at once, or this blocks
	}
	if p := g.peak.Load(); p != 5 {
		t.Fatalf("peak calls in flight = %d, want 5", p)
	}
	close(g.release)
	wg.Wait()
}

func TestSurface_SerialWaitEndsWithContext(t *testing.T) {
	t.Parallel()
	g := newGated()
	defer close(g.release)
	s := NewSurfaceFromAdapters([]*adapter.Adapter{g.tool("ser", "fam", true)}, opts(nil))
	sess := session.New("s")
	go s.Call(t.Context(), sess, "ser", json.RawMessage(`{}`))
	<-g.started
	ctx, cancel := context.WithCancel(t.Context())
	s.serialWait = func(string) { cancel() }
	if res := s.Call(ctx, sess, "ser", json.RawMessage(`{}`)); res.Code != sdk.CodeCancelled {
		t.Fatalf("Call = %s; a call cancelled while waiting must say cancelled", res.Code)
	}
}

func TestSurface_UnknownToolSuggests(t *testing.T) {
	t.Parallel()
	s := NewSurfaceFromAdapters([]*adapter.Adapter{tool("read_file", toolspec.FamilyFS, toolspec.Warm, 80), tool("write_file", toolspec.FamilyFS, toolspec.Warm, 80)}, opts(nil))
	res := s.Call(t.Context(), session.New("s"), "read_fil", json.RawMessage(`{}`))
	if res.Code != sdk.CodeUnknownTool || !strings.Contains(res.Text, "Did you mean read_file") {
		t.Fatalf("Call(read_fil) = %s %q; want unknown_tool suggesting read_file", res.Code, res.Text)
	}
}

// TestSurface_LoadToolQueryLoadsEveryMatch: a query loads every Cold tool
// it matches, in rank order, while their schemas fit the schema budget;
// the answer says how many matched and names each left out and why.
func TestSurface_LoadToolQueryLoadsEveryMatch(t *testing.T) {
	t.Parallel()
	var tools []*adapter.Adapter
	for i := range 14 {
		tools = append(tools, tool(fmt.Sprintf("browser_t%02d", i), "browser", toolspec.Cold, 400))
	}
	tools = append(tools, tool("other_tool", "fam", toolspec.Cold, 400))
	size := len(tools[0].Spec().Name) + len(tools[0].Spec().Description) + len(tools[0].Spec().InputSchema)
	for _, c := range []struct {
		budget, loaded int
	}{
		{budget: 1 << 20, loaded: 14},
		{budget: 10*size + size/2, loaded: 10},
	} {
		s := NewSurfaceFromAdapters(tools, opts(&config.Profile{Deferred: config.DeferredOn, SchemaBudgetBytes: c.budget}))
		res := s.Call(t.Context(), session.New("s"), toolspec.LoadTool, json.RawMessage(`{"query":"browser"}`))
		if res.IsError() {
			t.Fatalf("budget %d: load_tool = %s %s", c.budget, res.Code, res.Text)
		}
		if n := strings.Count(res.Text, "\n## browser_t"); n+boolInt(strings.HasPrefix(res.Text, "## browser_t")) != c.loaded {
			t.Errorf("budget %d: %d tools loaded, want %d:\n%s", c.budget, n, c.loaded, res.Text)
		}
		left := 14 - c.loaded
		if said := fmt.Sprintf("The query matched 14 deferred tools; %d were not loaded", left); (left > 0) != strings.Contains(res.Text, said) {
			t.Errorf("budget %d: the answer does not say %q:\n%s", c.budget, said, res.Text)
		}
		if left > 0 && !strings.Contains(res.Text, "- browser_t13: its schema would pass the schema budget") {
			t.Errorf("budget %d: the last match is not named with why:\n%s", c.budget, res.Text)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestSurface_DeferredOnLoadsColdTools(t *testing.T) {
	t.Parallel()
	var changed []string
	var mu sync.Mutex
	o := opts(&config.Profile{Deferred: config.DeferredOn})
	o.OnListChanged = func(s *session.Session) { mu.Lock(); changed = append(changed, s.ID()); mu.Unlock() }
	s := NewSurfaceFromAdapters([]*adapter.Adapter{
		tool("warm_one", "fam", toolspec.Warm, 80),
		tool("web_fetch", toolspec.FamilySearch, toolspec.Cold, 80), // brief from the registry
		adapter.New(sdk.Spec{Name: "custom_briefless", Description: "Counts sheep. Slowly.", InputSchema: schemaOf(80), Effect: sdk.EffectNone}, "custom", toolspec.Cold, echoExec("x"), adapter.Options{}),
		adapter.New(sdk.Spec{Name: "custom_branded", Brief: "Own brief.", Description: "Long text.", InputSchema: schemaOf(80), Effect: sdk.EffectNone}, "custom", toolspec.Cold, echoExec("x"), adapter.Options{}),
	}, o)
	if !s.DeferredOn() {
		t.Fatal("deferred on")
	}
	lt, ok := s.Lookup(toolspec.LoadTool)
	if !ok {
		t.Fatal("load_tool missing")
	}
	desc := lt.Spec().Description
	for _, line := range []string{
		"custom_branded: Own brief.",
		"custom_briefless: Counts sheep.",
		"web_fetch: " + toolspec.Brief("web_fetch"),
	} {
		if !strings.Contains(desc, "\n"+line) {
			t.Errorf("load_tool description lacks %q:\n%s", line, desc)
		}
	}
	if strings.Contains(desc, "warm_one") {
		t.Errorf("a Warm tool in the catalog:\n%s", desc)
	}

	sess := session.New("s")
	if got := names(s.List(sess)); !slices.Equal(got, []string{toolspec.LoadTool, "warm_one"}) {
		t.Fatalf("List = %v", got)
	}
	res := s.Call(t.Context(), sess, toolspec.LoadTool, json.RawMessage(`{"names":["web_fetch"]}`))
	if res.IsError() || !strings.Contains(res.Text, "## web_fetch") {
		t.Fatalf("load_tool = %s %s", res.Code, res.Text)
	}
	if got := names(s.List(sess)); !slices.Equal(got, []string{toolspec.LoadTool, "warm_one", "web_fetch"}) {
		t.Fatalf("List after load = %v", got)
	}
	if got := names(s.List(session.New("other"))); slices.Contains(got, "web_fetch") {
		t.Fatal("loading is per session")
	}
	s.Call(t.Context(), sess, toolspec.LoadTool, json.RawMessage(`{"names":["web_fetch"]}`)) // again: no change
	res = s.Call(t.Context(), sess, toolspec.LoadTool, json.RawMessage(`{"query":"sheep"}`))
	if res.IsError() || !strings.Contains(res.Text, "## custom_briefless") || strings.Contains(res.Text, "## custom_branded") {
		t.Fatalf("load_tool query = %s %s", res.Code, res.Text)
	}

	// A Cold tool called directly: invalid input does not load it, a valid call does.
	if res := s.Call(t.Context(), sess, "custom_branded", json.RawMessage(`{"zzz":1}`)); res.Code != sdk.CodeInvalidInput || sess.IsLoaded("custom_branded") {
		t.Fatalf("invalid direct call: %s, loaded=%v", res.Code, sess.IsLoaded("custom_branded"))
	}
	if res := s.Call(t.Context(), sess, "custom_branded", json.RawMessage(`{}`)); res.IsError() || !sess.IsLoaded("custom_branded") {
		t.Fatalf("direct call: %s, loaded=%v", res.Code, sess.IsLoaded("custom_branded"))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(changed) != 3 {
		t.Fatalf("OnListChanged called %d times (%v), want 3: web_fetch, custom_briefless, custom_branded", len(changed), changed)
	}
}

func TestCatalogBrief_Order(t *testing.T) {
	t.Parallel()
	mk := func(name, brief, desc string) *adapter.Adapter {
		return adapter.New(sdk.Spec{Name: name, Brief: brief, Description: desc}, "f", toolspec.Cold, echoExec(name), adapter.Options{})
	}
	for _, tc := range []struct {
		a    *adapter.Adapter
		want string
	}{
		{mk("custom", "Adapter brief.", "Description. More."), "Adapter brief."},
		{mk("grep", "", "Description. More."), toolspec.Brief("grep")},
		{mk("custom", "", "First sentence. Second one."), "First sentence."},
		{mk("custom", "", "Line one\nline two"), "Line one"},
	} {
		if got := catalogBrief(tc.a); got != tc.want {
			t.Errorf("catalogBrief(%s) = %q, want %q", tc.a.Name(), got, tc.want)
		}
	}
}
