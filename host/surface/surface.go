package surface

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"strings"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/bus"
	"github.com/yagent/yagent/call/guard"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/host/authz"
	"github.com/yagent/yagent/host/config"
	"github.com/yagent/yagent/host/hosttools"
	"github.com/yagent/yagent/internal/suggest"
	"github.com/yagent/yagent/sdk"
)

// Source is one plugin's contribution to the surface.
type Source struct {
	Plugin string
	// Family is the plugin's family; only a static tool's own family may serve it.
	Family string
	// Pinned plugins are trusted with the Effect and roles they declare for
	// external tools.
	Pinned bool
	Specs  []sdk.Spec
	Exec   adapter.Executor
}

// Options configures a Surface.
type Options struct {
	// Profile filters and tiers the tools; nil = defaults: every family,
	// deferred auto, a 24 KiB budget.
	Profile   *config.Profile
	Workspace string
	// Yolo (-y) makes the default approver allow every ask.
	Yolo bool
	// FullYolo (-Y) implies Yolo and removes ask_user_for_help.
	FullYolo bool
	// Guard is attached to every adapter, once, after they are all built;
	// nil = guard.New for Workspace and Profile.
	Guard adapter.Guard
	// Approver resolves the guard's asks; nil = an authz.Approver with
	// YOLO and session passes and no project passes.
	Approver adapter.Approver
	Bus      *bus.Dispatcher
	// Observer sees every call of every tool (the audit trail, telemetry);
	// nil = none.
	Observer adapter.Observer
	Logger   *slog.Logger
	// Helper routes ask_user_for_help's questions (the authorization
	// loop); nil = straight to the session's answerer.
	Helper hosttools.Helper
	// OnListChanged is told when a session loads a Cold tool it had not.
	OnListChanged func(sess *session.Session)
	// Unloaded says, per plugin (a first-party plugin is named by its
	// family), why its tools are not here: refused, its family off, not
	// found. A call of such a tool is answered with the reason.
	Unloaded map[string]string
	// Temp returns a session's own temp folder (adapter.Options.Temp);
	// nil = none.
	Temp func(sess *session.Session) *sdk.TempFolder
}

// Skip is a tool left out of the surface, and why.
type Skip struct {
	Tool, Plugin, Reason string
}

// CatalogEntry is one deferred tool: its name and one-line brief.
type CatalogEntry struct {
	Name, Brief string
}

// Surface is the merged, guarded tool surface.
type Surface struct {
	opts     Options
	logger   *slog.Logger
	adapters map[string]*adapter.Adapter
	names    []string                 // sorted
	tiers    map[string]toolspec.Tier // effective tiers
	deferred bool
	// budget is the profile's schema budget in bytes: the listing's, and
	// what one load_tool query loads at most.
	budget   int
	skipped  []Skip
	warnings []string
	// off says why the profile leaves a tool out, by name.
	off   map[string]string
	locks serialLocks

	// serialWait, when set (tests), is called when a Serial call must wait
	// for another call of its session and family.
	serialWait func(name string)
}

// New builds the surface from the plugins' sources and the host-native tools.
func New(sources []Source, opts Options) (*Surface, error) {
	s := newSurface(opts)
	if err := s.rebuild(sources); err != nil {
		return nil, err
	}
	return s, nil
}

// NewSurfaceFromAdapters builds a surface from ready adapters, through the
// same filtering, tiering, deferral and guard attachment as New; the
// host-native tools are not added (load_tool is, when deferred mode is on).
// It panics on an invalid profile, a programming error in a test.
func NewSurfaceFromAdapters(adapters []*adapter.Adapter, opts Options) *Surface {
	s := newSurface(opts)
	cands := make([]candidate, len(adapters))
	for i, a := range adapters {
		cands[i] = candidate{a: a, plugin: a.Family()}
	}
	if err := s.assemble(cands); err != nil {
		panic(fmt.Sprintf("surface.NewSurfaceFromAdapters: %v", err))
	}
	return s
}

func newSurface(opts Options) *Surface {
	if opts.FullYolo {
		opts.Yolo = true
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return &Surface{
		opts:     opts,
		logger:   logger,
		adapters: map[string]*adapter.Adapter{},
		tiers:    map[string]toolspec.Tier{},
	}
}

type candidate struct {
	a      *adapter.Adapter
	plugin string
}

// rebuild binds every source's specs, adds the host-native tools and
// assembles the surface.
func (s *Surface) rebuild(sources []Source) error {
	var cands []candidate
	for _, src := range sources {
		for _, spec := range src.Specs {
			a, reason := s.bind(src, spec)
			if reason != "" {
				s.skip(spec.Name, src.Plugin, reason)
				continue
			}
			cands = append(cands, candidate{a: a, plugin: src.Plugin})
		}
	}
	exitSpec, exitExec := hosttools.AgentExit()
	askSpec, askExec := hosttools.AskUserForHelp(s.opts.Bus, s.opts.Helper)
	for _, h := range []struct {
		spec sdk.Spec
		exec adapter.Executor
	}{{exitSpec, exitExec}, {askSpec, askExec}} {
		cands = append(cands, candidate{a: s.hostAdapter(h.spec, h.exec), plugin: toolspec.FamilyHost})
	}
	return s.assemble(cands)
}

// bind turns one plugin spec into an adapter, or says why it is skipped:
// toolspec.Admit decides, then the schema must compile.
func (s *Surface) bind(src Source, spec sdk.Spec) (*adapter.Adapter, string) {
	if spec.Name != "" && src.Exec == nil {
		return nil, "the plugin has no executor"
	}
	ad, reason := toolspec.Admit(spec, src.Plugin, src.Family, src.Pinned)
	if reason != "" {
		return nil, reason
	}
	if ad.Warning != "" {
		s.warn(ad.Warning)
	}
	a := adapter.New(ad.Spec, src.Family, ad.Tier, src.Exec, s.adapterOptions(ad.Trusted))
	if err := a.SchemaError(); err != nil {
		return nil, err.Error()
	}
	return a, ""
}

func (s *Surface) adapterOptions(trusted bool) adapter.Options {
	return adapter.Options{Workspace: s.opts.Workspace, Logger: s.logger, Bus: s.opts.Bus, Trusted: trusted, Observer: s.opts.Observer, Temp: s.opts.Temp}
}

func (s *Surface) hostAdapter(spec sdk.Spec, exec adapter.Executor) *adapter.Adapter {
	st, _ := toolspec.Lookup(spec.Name)
	return adapter.New(spec, toolspec.FamilyHost, st.Tier, exec, s.adapterOptions(true))
}

// assemble filters the candidates by the profile, sets the tiers, decides
// deferred mode, adds load_tool when it is on, and attaches the guard.
func (s *Surface) assemble(cands []candidate) error {
	prof := s.opts.Profile
	if prof != nil {
		if err := prof.Validate(); err != nil {
			return err
		}
	}
	s.off = map[string]string{}
	for _, c := range cands {
		name := c.a.Name()
		switch {
		case name == toolspec.LoadTool:
			s.skip(name, c.plugin, "the surface adds it itself when deferred mode is on")
			continue
		case s.adapters[name] != nil:
			s.skip(name, c.plugin, fmt.Sprintf("family %s already serves a tool of that name", s.adapters[name].Family()))
			continue
		case s.opts.FullYolo && name == toolspec.AskUserForHelp:
			continue // -Y: nobody is there to ask
		}
		if why := s.offReason(c.a); why != "" {
			s.off[name] = why
			continue // the profile leaves it out
		}
		s.adapters[name] = c.a
		s.tiers[name] = s.tierOf(c.a)
	}

	s.budget = prof.Budget()
	switch prof.DeferredMode() {
	case config.DeferredOn:
		s.deferred = true
	case config.DeferredAuto:
		s.deferred = ListingSize(s.defs(s.sortedNames(), nil)) > prof.Budget()
	}
	if s.deferred {
		s.demote(prof.Budget())
		spec, exec := hosttools.LoadTool(s, s.catalogLines())
		s.adapters[toolspec.LoadTool] = s.hostAdapter(spec, exec)
		s.tiers[toolspec.LoadTool] = toolspec.Hot
	}
	s.names = s.sortedNames()

	// The guard, once, for every adapter, after the loop: no appender can
	// forget it.
	g, ap := s.opts.Guard, s.opts.Approver
	if g == nil {
		g = guard.New(guard.Options{Workspace: s.opts.Workspace, Policy: prof.Rules()})
	}
	if ap == nil {
		ap = authz.NewApprover(authz.ApproverOptions{
			Passes: &authz.Passes{Yolo: s.opts.Yolo},
			Loop:   authz.NewLoop(authz.LoopOptions{Bus: s.opts.Bus, Logger: s.logger}),
			Logger: s.logger,
		})
	}
	for _, name := range s.names {
		s.adapters[name].AttachGuard(g, ap)
	}
	return nil
}

// offReason applies the profile: first-party families must be enabled
// (other families are external plugins, governed by Grant and Deny alone);
// Deny wins over Grant; Grant never removes the host-native tools. It says
// why the profile leaves a out, in the words of its keys; "" when a is in.
func (s *Surface) offReason(a *adapter.Adapter) string {
	p := s.opts.Profile
	if p == nil {
		return ""
	}
	fam := a.Family()
	switch {
	case len(p.Families) > 0 && slices.Contains(toolspec.Families(), fam) && !slices.Contains(p.Families, fam):
		return fmt.Sprintf("profile %s leaves its family, %s, off (families: %s)", p.Name, fam, strings.Join(p.Families, ", "))
	case matchAny(p.Deny, a.Name()):
		return fmt.Sprintf("profile %s denies it (deny: %s)", p.Name, strings.Join(p.Deny, ", "))
	case len(p.Grant) == 0 || fam == toolspec.FamilyHost || matchAny(p.Grant, a.Name()):
		return ""
	}
	return fmt.Sprintf("profile %s grants only %s", p.Name, strings.Join(p.Grant, ", "))
}

func matchAny(globs []string, name string) bool {
	return slices.ContainsFunc(globs, func(g string) bool {
		ok, _ := path.Match(g, name)
		return ok
	})
}

// tierOf is the adapter's tier with the profile's override, which applies
// to the static tools of plugin families only: external tools stay Cold and
// host-native ones Hot.
func (s *Surface) tierOf(a *adapter.Adapter) toolspec.Tier {
	name, tier := a.Name(), a.Tier()
	if s.opts.Profile == nil {
		return tier
	}
	word, ok := s.opts.Profile.Tiers[name]
	if !ok {
		return tier
	}
	t, _ := toolspec.ParseTier(word) // Validate has parsed it, and refused a host tool's
	return t
}

// demote moves Warm tools to Cold, largest schema first, until the listing
// a fresh session sees fits budget. Hot tools never move.
func (s *Surface) demote(budget int) {
	for {
		names := s.sortedNames()
		listed := s.defs(slices.DeleteFunc(slices.Clone(names), func(n string) bool { return s.tiers[n] == toolspec.Cold }), nil)
		spec, _ := hosttools.LoadTool(s, s.catalogLines())
		listed = append(listed, ToolDef{Name: spec.Name, Description: spec.Description, InputSchema: spec.InputSchema})
		if ListingSize(listed) <= budget {
			return
		}
		var victim string
		for _, n := range names {
			if s.tiers[n] != toolspec.Warm {
				continue
			}
			if victim == "" || len(s.adapters[n].Spec().InputSchema) > len(s.adapters[victim].Spec().InputSchema) {
				victim = n
			}
		}
		if victim == "" {
			s.warn(fmt.Sprintf("the listing exceeds the schema budget of %d bytes with every warm tool deferred", budget))
			return
		}
		s.tiers[victim] = toolspec.Cold
	}
}

func (s *Surface) sortedNames() []string {
	names := make([]string, 0, len(s.adapters))
	for n := range s.adapters {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (s *Surface) skip(tool, plugin, reason string) {
	// Not logged: Skipped reports it, and the host warns of it once.
	s.skipped = append(s.skipped, Skip{Tool: tool, Plugin: plugin, Reason: reason})
}

func (s *Surface) warn(msg string) {
	s.warnings = append(s.warnings, msg)
	s.logger.Warn(msg)
}

// def is the ToolDef of one adapter.
func (s *Surface) def(name string) ToolDef {
	a := s.adapters[name]
	spec := a.Spec()
	return ToolDef{
		Name:        name,
		Description: spec.Description,
		Brief:       catalogBrief(a),
		Family:      a.Family(),
		InputSchema: spec.InputSchema,
		Tier:        s.tiers[name],
		Effect:      spec.Effect,
		Serial:      spec.Serial,
	}
}

// defs returns the defs of names that keep (nil: all) admits.
func (s *Surface) defs(names []string, keep func(name string) bool) []ToolDef {
	out := make([]ToolDef, 0, len(names))
	for _, n := range names {
		if keep == nil || keep(n) {
			out = append(out, s.def(n))
		}
	}
	SortToolDefs(out)
	return out
}

// catalogBrief is the one line naming a deferred tool: the adapter's brief,
// else the registry's, else the first sentence of the description.
func catalogBrief(a *adapter.Adapter) string {
	if b := a.Brief(); b != "" {
		return b
	}
	if b := toolspec.Brief(a.Name()); b != "" {
		return b
	}
	return firstSentence(a.Spec().Description)
}

func (s *Surface) catalogLines() []hosttools.CatalogLine {
	var out []hosttools.CatalogLine
	for _, n := range s.sortedNames() {
		if s.tiers[n] == toolspec.Cold {
			out = append(out, hosttools.CatalogLine{Name: n, Brief: catalogBrief(s.adapters[n]), Group: toolspec.CatalogGroup(n)})
		}
	}
	return out
}

// List returns the tools sess sees now, sorted: everything when deferred
// mode is off; else the Hot and Warm tools, load_tool, and the Cold tools
// sess has loaded.
func (s *Surface) List(sess *session.Session) []ToolDef {
	if !s.deferred {
		return s.defs(s.names, nil)
	}
	return s.defs(s.names, func(n string) bool {
		return s.tiers[n] != toolspec.Cold || sess != nil && sess.IsLoaded(n)
	})
}

// All returns every tool of the surface, sorted.
func (s *Surface) All() []ToolDef { return s.defs(s.names, nil) }

// Lookup returns the adapter of name.
func (s *Surface) Lookup(name string) (*adapter.Adapter, bool) {
	a, ok := s.adapters[name]
	return a, ok
}

// Serial reports whether calls of name run one at a time per session and
// family. It reads the surface's own adapters: what the loop asks is what
// the surface holds.
func (s *Surface) Serial(name string) bool {
	a, ok := s.adapters[name]
	return ok && a.Spec().Serial
}

// Skipped returns the tools left out for a conflict or a fault, in the
// order met.
func (s *Surface) Skipped() []Skip { return slices.Clone(s.skipped) }

// Warnings returns the surface's start-up notes: ignored profile tiers, a
// listing over budget.
func (s *Surface) Warnings() []string { return slices.Clone(s.warnings) }

// DeferredOn reports whether deferred mode is on.
func (s *Surface) DeferredOn() bool { return s.deferred }

// Catalog returns the Cold tools, sorted; empty when deferred mode is off.
func (s *Surface) Catalog() []CatalogEntry {
	if !s.deferred {
		return nil
	}
	var out []CatalogEntry
	for _, c := range s.catalogLines() {
		out = append(out, CatalogEntry{Name: c.Name, Brief: c.Brief})
	}
	return out
}

// Call runs name for sess. An unknown name gets an unknown_tool result with
// suggestions. Serial tools wait for the session's other calls of their
// family. A Cold tool called directly runs once its input validates, and is
// loaded for sess from then on.
func (s *Surface) Call(ctx context.Context, sess *session.Session, name string, raw json.RawMessage) *adapter.Result {
	if sess == nil {
		sess = session.New("")
	}
	a, ok := s.adapters[name]
	if !ok {
		return s.unknown(name)
	}
	if s.Serial(name) {
		var onWait func()
		if s.serialWait != nil {
			onWait = func() { s.serialWait(name) }
		}
		release, err := s.locks.acquire(ctx, sess.ID()+"\x00"+a.Family(), onWait)
		if err != nil {
			return &adapter.Result{Code: sdk.CodeCancelled, Text: fmt.Sprintf("%s was cancelled while waiting for the session's other %s calls.", name, a.Family())}
		}
		defer release()
	}
	res := a.Call(ctx, sess, raw)
	if s.deferred && s.tiers[name] == toolspec.Cold && res.Code != sdk.CodeInvalidInput && sess.MarkLoaded(name) {
		s.listChanged(sess)
	}
	return res
}

func (s *Surface) unknown(name string) *adapter.Result {
	// A tool that exists but is off here: say why, rather than guess a
	// spelling.
	if why, ok := s.off[name]; ok {
		return &adapter.Result{Code: sdk.CodeUnknownTool, Text: fmt.Sprintf("There is no tool named %q here: %s. Use the tools listed, or ask the user to change the profile.", name, why)}
	}
	if st, ok := toolspec.Lookup(name); ok {
		if why, ok := s.opts.Unloaded[st.Family]; ok {
			return &adapter.Result{Code: sdk.CodeUnknownTool, Text: fmt.Sprintf("There is no tool named %q here: it is a tool of the %s plugin, which is not loaded: %s. Use the tools listed, or ask the user to fix it.", name, st.Family, why)}
		}
	}
	text := fmt.Sprintf("There is no tool named %q.", name)
	if sug := suggest.Close(name, s.names); len(sug) > 0 {
		text += fmt.Sprintf(" Did you mean %s?", strings.Join(sug, ", "))
	}
	if s.deferred {
		text += " Deferred tools are listed in load_tool's description; load_tool with a query finds them."
	}
	// A custom plugin that did not load may be the one that has it: its
	// tools are not known until it runs.
	if custom := s.unloadedCustom(); custom != "" {
		text += " Plugins not loaded here, whose tools are unknown: " + custom + "."
	}
	return &adapter.Result{Code: sdk.CodeUnknownTool, Text: text}
}

// unloadedCustom names each custom plugin Options.Unloaded holds, with
// its reason, sorted.
func (s *Surface) unloadedCustom() string {
	var out []string
	for name, why := range s.opts.Unloaded {
		if !slices.Contains(toolspec.Families(), name) {
			out = append(out, fmt.Sprintf("%s (%s)", name, why))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

func (s *Surface) listChanged(sess *session.Session) {
	if s.opts.OnListChanged != nil {
		s.opts.OnListChanged(sess)
	}
}

// LoadTools implements hosttools.Loader: the named tools, and the Cold
// tools matching query in rank order for as long as their schemas fit the
// schema budget (with the named ones'), marked loaded for sess; the
// matches left out are named with why.
func (s *Surface) LoadTools(sess *session.Session, names []string, query string) hosttools.Loaded {
	var out hosttools.Loaded
	var picked []string
	size := 0
	for _, n := range names {
		n = strings.TrimSpace(n)
		if _, ok := s.adapters[n]; !ok || n == toolspec.LoadTool {
			out.Unknown = append(out.Unknown, hosttools.UnknownTool{Name: n, Suggestions: suggest.Close(n, s.names)})
			continue
		}
		if !slices.Contains(picked, n) {
			picked = append(picked, n)
			size += s.schemaSize(n)
		}
	}
	hits := s.search(query)
	out.Matched = len(hits)
	for _, n := range hits {
		switch {
		case slices.Contains(picked, n):
		case s.budget > 0 && size+s.schemaSize(n) > s.budget:
			out.Left = append(out.Left, hosttools.LeftTool{Name: n,
				Reason: fmt.Sprintf("its schema would pass the schema budget of %d bytes for one answer; load it by name, or narrow the query", s.budget)})
		default:
			picked = append(picked, n)
			size += s.schemaSize(n)
		}
	}
	changed := false
	out.Tools = make([]hosttools.LoadedTool, 0, len(picked))
	for _, n := range picked {
		spec := s.adapters[n].Spec()
		out.Tools = append(out.Tools, hosttools.LoadedTool{Name: n, Description: spec.Description, InputSchema: spec.InputSchema})
		if s.tiers[n] == toolspec.Cold && sess.MarkLoaded(n) {
			changed = true
		}
	}
	if changed {
		s.listChanged(sess)
	}
	return out
}

// schemaSize is what loading tool n adds to an answer: its name,
// description and input schema.
func (s *Surface) schemaSize(n string) int {
	spec := s.adapters[n].Spec()
	return len(n) + len(spec.Description) + len(spec.InputSchema)
}

// search ranks the Cold tools by how many of query's words their name,
// brief and description contain.
func (s *Surface) search(query string) []string {
	words := strings.Fields(strings.ToLower(query))
	if len(words) == 0 {
		return nil
	}
	type hit struct {
		name  string
		score int
	}
	var hits []hit
	for _, n := range s.names {
		if s.tiers[n] != toolspec.Cold {
			continue
		}
		a := s.adapters[n]
		hay := strings.ToLower(n + " " + strings.ReplaceAll(n, "_", " ") + " " + catalogBrief(a) + " " + a.Spec().Description)
		score := 0
		for _, w := range words {
			if strings.Contains(hay, w) {
				score++
			}
		}
		if score > 0 {
			hits = append(hits, hit{n, score})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return cmp.Compare(b.score, a.score) })
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.name
	}
	return out
}
