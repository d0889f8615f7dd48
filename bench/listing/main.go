package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/host/app"
	"github.com/yagent/yagent/host/mcpserver"
	"github.com/yagent/yagent/host/surface"
	"github.com/yagent/yagent/profiles"
)

func main() {
	plugins := flag.String("plugins", "bin/plugins", "folder of the built plugins")
	flag.StringVar(&dumpDir, "dump", "", "also write each raw tools/list result to this folder, as PROFILE-MODE.json")
	flag.Parse()
	if err := run(os.Stdout, *plugins); err != nil {
		fmt.Fprintln(os.Stderr, "listing:", err)
		os.Exit(1)
	}
}

// dumpDir, when set, receives the raw tools/list results.
var dumpDir string

// mode is how a profile's deferred setting is taken.
type mode struct {
	name     string
	deferred string // "" = as the profile ships it
}

var modes = []mode{{"shipped", ""}, {"on", "on"}, {"off", "off"}}

// listing is what one host listed up front, and the cost of one load_tool.
type listing struct {
	deferred   bool
	budget     int
	result     int // bytes of the tools/list result
	tools      []rawTool
	budgetSize int // the surface's own measure of the listed defs
	allSize    int // the surface's measure of every tool: what auto compares with the budget
	cold       string
	loadAnswer int // bytes of the load_tool result for cold
	loadAdded  int // bytes cold adds to the tools/list result once loaded
	tiers      map[string]toolspec.Tier
}

type rawTool struct {
	name  string
	bytes int
}

func run(w io.Writer, plugins string) error {
	abs, err := filepath.Abs(plugins)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(abs, "yagent-plugin-fs")); err != nil {
		return fmt.Errorf("no built plugins in %s (make build first): %w", abs, err)
	}
	got := map[string]map[string]*listing{}
	for _, p := range profiles.Names() {
		got[p] = map[string]*listing{}
		for _, m := range modes {
			l, err := measure(p, m, abs)
			if err != nil {
				return fmt.Errorf("profile %s, deferred %s: %w", p, m.name, err)
			}
			got[p][m.name] = l
		}
	}
	report(w, got)
	return nil
}

func measure(profile string, m mode, plugins string) (*listing, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tmp, err := os.MkdirTemp("", "yagent-listing-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	home, ws := filepath.Join(tmp, "home"), filepath.Join(tmp, "ws")
	for _, d := range []string{home, ws} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, err
		}
	}
	opts := app.Options{Workspace: ws, Profile: profile, Home: home, PluginDirs: []string{plugins}}
	if m.deferred != "" {
		opts.Overrides = map[string]any{"deferred": m.deferred}
	}
	a, err := app.Open(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer a.Close(context.Background())

	srv := mcpserver.New(a.Surface, nil)
	a.OnListChanged(func(s *session.Session) { srv.NotifyListChanged(s) })
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	rec := &recorder{Transport: ct}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "listing", Version: "0"}, nil).Connect(ctx, rec, nil)
	if err != nil {
		return nil, err
	}
	defer func() {
		cs.Close()
		<-done
	}()

	l := &listing{deferred: a.Surface.DeferredOn(), budget: a.Profile.Budget(), tiers: map[string]toolspec.Tier{}}
	all := a.Surface.All()
	for _, d := range all {
		l.tiers[d.Name] = d.Tier
	}
	l.allSize = surface.ListingSize(all)
	raw, err := rec.list(ctx, cs)
	if err != nil {
		return nil, err
	}
	l.result = len(raw)
	if dumpDir != "" {
		if err := os.WriteFile(filepath.Join(dumpDir, profile+"-"+m.name+".json"), raw, 0o644); err != nil {
			return nil, err
		}
	}
	if l.tools, err = splitTools(raw); err != nil {
		return nil, err
	}
	var listed []surface.ToolDef
	for _, d := range all {
		if slices.ContainsFunc(l.tools, func(t rawTool) bool { return t.name == d.Name }) {
			listed = append(listed, d)
		}
	}
	l.budgetSize = surface.ListingSize(listed)

	if cat := a.Surface.Catalog(); l.deferred && len(cat) > 0 {
		l.cold = cat[0].Name
		ans, err := rec.call(ctx, cs, toolspec.LoadTool, map[string]any{"names": []string{l.cold}})
		if err != nil {
			return nil, err
		}
		l.loadAnswer = len(ans)
		after, err := rec.list(ctx, cs)
		if err != nil {
			return nil, err
		}
		l.loadAdded = len(after) - len(raw)
	}
	return l, nil
}

func splitTools(raw json.RawMessage) ([]rawTool, error) {
	var res struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	out := make([]rawTool, len(res.Tools))
	for i, t := range res.Tools {
		var n struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(t, &n); err != nil {
			return nil, err
		}
		out[i] = rawTool{n.Name, len(t)}
	}
	return out, nil
}

// recorder is a client transport that keeps the raw result of every
// response, as the server wrote it.
type recorder struct {
	mcp.Transport
	mu   sync.Mutex
	last json.RawMessage
}

func (r *recorder) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recConn{Connection: c, r: r}, nil
}

type recConn struct {
	mcp.Connection
	r *recorder
}

func (c *recConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.r.mu.Lock()
		c.r.last = slices.Clone(resp.Result)
		c.r.mu.Unlock()
	}
	return msg, err
}

func (r *recorder) take() json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

func (r *recorder) list(ctx context.Context, cs *mcp.ClientSession) (json.RawMessage, error) {
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return nil, err
	}
	if res.NextCursor != "" {
		return nil, errors.New("tools/list is paginated; count every page")
	}
	return r.take(), nil
}

func (r *recorder) call(ctx context.Context, cs *mcp.ClientSession, name string, args any) (json.RawMessage, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return nil, fmt.Errorf("%s failed: %v", name, res.Content)
	}
	return r.take(), nil
}

func kb(n int) string { return fmt.Sprintf("%d B", n) }

func report(w io.Writer, got map[string]map[string]*listing) {
	names := profiles.Names()
	fmt.Fprintf(w, "## Context: the tool listing's bytes\n\n")
	fmt.Fprintf(w, "Written by `go run ./bench/listing` (bench/run.sh). Bytes are those of the `tools/list` result as the MCP front\n")
	fmt.Fprintf(w, "encodes it (names, descriptions, schemas, annotations), read off an in-memory transport; the budget column is\n")
	fmt.Fprintf(w, "the host's own measure (name, description and schema per tool), which `schema_budget_bytes` is compared with.\n")
	fmt.Fprintf(w, "Under `deferred: auto` deferred mode is on when every tool's listing, by that measure, exceeds the budget.\n\n")
	fmt.Fprintf(w, "| profile | as shipped | tools | with deferred on | tools | deferred on (budget measure) | every tool (budget measure) | budget |\n|---|---|---|---|---|---|---|---|\n")
	for _, p := range names {
		s, on := got[p]["shipped"], got[p]["on"]
		mode := "deferred off"
		if s.deferred {
			mode = "deferred on"
		}
		fmt.Fprintf(w, "| %s | %s (%s) | %d | %s | %d | %s | %s | %d |\n", p, kb(s.result), mode, len(s.tools), kb(on.result), len(on.tools), kb(on.budgetSize), kb(s.allSize), s.budget)
	}
	fmt.Fprintf(w, "\nLoading one Cold tool (deferred on): the bytes of `load_tool`'s answer, and what the tool adds to the next `tools/list`.\n\n")
	fmt.Fprintf(w, "| profile | tool | load_tool answer | added to the listing |\n|---|---|---|---|\n")
	for _, p := range names {
		on := got[p]["on"]
		if on.cold == "" {
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %d B | %d B |\n", p, on.cold, on.loadAnswer, on.loadAdded)
	}
	fmt.Fprintf(w, "\nBytes per tool in the `tools/list` result (profile `full` with deferred off, so every tool is listed with its\nschema; `load_tool` from deferred on); tier as `full` has it.\n\n")
	full := got["full"]
	tools := slices.Clone(full["off"].tools)
	for _, t := range full["on"].tools {
		if t.name == toolspec.LoadTool {
			tools = append(tools, t)
		}
	}
	slices.SortFunc(tools, func(a, b rawTool) int { return b.bytes - a.bytes })
	fmt.Fprintf(w, "| tool | tier | bytes |\n|---|---|---|\n")
	for _, t := range tools {
		fmt.Fprintf(w, "| %s | %s | %d |\n", t.name, strings.ToLower(full["on"].tiers[t.name].String()), t.bytes)
	}
}
