package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/bus"
	"github.com/yagent/yagent/call/guard"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/host/audit"
	"github.com/yagent/yagent/host/authz"
	"github.com/yagent/yagent/host/config"
	"github.com/yagent/yagent/host/netproxy"
	"github.com/yagent/yagent/host/pluginmgr"
	"github.com/yagent/yagent/host/surface"
	"github.com/yagent/yagent/internal/sessiontmp"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk/sandbox"
)

// AutonomousInstructions are App.Instructions under -Y (Options.FullYolo):
// what the model is told when nobody will answer. yagent serve sends them
// in the MCP initialize result's instructions.
const AutonomousInstructions = `You are running autonomously: nobody is watching this session to answer questions.
Do not ask the user for help or confirmation. When a choice is ambiguous, pick the most
reasonable option, say in one line which you picked and why, and carry on. A tool call that
would wait for the user's approval runs without it, but a refusal stands: a program the
profile's rules deny, a command too large or too deeply nested to check, a write to a place
no approval opens, and what the sandbox blocks while a command runs. Do not retry a refused
call; find another way. Stay inside the task you were given.`

// Options configures Open.
type Options struct {
	// Workspace is the folder the tools work in; "" = the current folder.
	Workspace string
	// Profile names the profile; "" = environment, config files, then "coder".
	Profile string
	// Yolo (-y) turns every ask into allow; a deny stays a deny. FullYolo
	// (-Y) implies Yolo, removes ask_user_for_help and sets Instructions to
	// AutonomousInstructions.
	Yolo, FullYolo bool
	// Home is the user's home; "" = os.UserHomeDir().
	Home string
	// PluginDirs are searched in order; nil = pluginmgr.DefaultDirs.
	PluginDirs []string
	// LockFile pins plugin checksums; "" = ~/.yagent/plugins.lock.
	LockFile string
	// CacheDir holds the spec cache; "" = ~/.yagent/cache/specs.
	CacheDir string
	// Overrides are flag values on top of every config layer (koanf keys),
	// such as "plugin_dev_dir": an absolute folder of plugins under
	// development, used without a pin check (yagent's --plugin-dev-dir).
	Overrides map[string]any
	// Log receives the host's and the plugins' logs; nil = discarded.
	Log io.Writer
	// LogLevel is hclog's: "trace", "debug", "info", "warn" (default),
	// "error" or "off".
	LogLevel string
	// LogFormat is "text" (default: hclog's lines) or "json" (one JSON
	// object a line), for the host's lines and the plugins' alike.
	LogFormat string
	// ProbeSandbox reports the kernel layers and the cgroup v2 folder; nil
	// = sandbox.Probe and cgroup.Root (tests play other machines).
	ProbeSandbox func() (sandbox.Layers, string, error)
	// Observer also watches every call, beside the host's own audit trail
	// and telemetry; nil = none.
	Observer adapter.Observer
	// PluginSums are the sha256 of the plugin binaries this program vouches
	// for, by plugin name: such a binary runs wherever it lies, even in a
	// folder a command can write (as a pinned one does). nil = the sums
	// this program was linked with (pluginmgr.BuiltSums: make build sets
	// them for bin/yagent).
	PluginSums map[string]string
	// Resolver looks up the names the sessions' proxies connect to
	// (sandbox.network: proxy); nil = net.DefaultResolver (tests map
	// names to their own servers).
	Resolver netproxy.Resolver
}

// App is a running host.
type App struct {
	Workspace string
	Profile   *config.Profile
	Plugins   *pluginmgr.Manager
	// Loaded are the plugins whose tools joined the surface; All also has
	// the refused ones and those of disabled families.
	Loaded, All []*pluginmgr.Plugin
	// LockFile is the pin lock file in use.
	LockFile string
	Surface  *surface.Surface
	Bus      *bus.Dispatcher
	// Approver resolves the guard's asks: passes, then the session's user
	// through its loop (Approver.Loop()), on Bus.
	Approver *authz.Approver
	// Warnings are start-up problems that did not stop the host: a missing
	// plugin binary, a duplicate, a refused pin, a skipped tool.
	Warnings []string
	// Instructions for the model; set under FullYolo.
	Instructions string
	// SandboxLayers are the kernel layers of the sandbox as this machine
	// has them; SandboxStatus says in one line what commands run under
	// (yagent serve logs it at start).
	SandboxLayers []SandboxLayer
	SandboxStatus string
	// TempStatus says in one line what the sessions' temp folders are
	// here (TempLine).
	TempStatus string

	logger *slog.Logger

	// egress runs the sessions' proxies under sandbox.network: proxy; nil
	// otherwise.
	egress *egress
	// temps are the sessions' own temp folders, nil when none can be
	// made; tempOver the machine's temp folders they stand for.
	temps    *sessiontmp.Folders
	tempOver []string

	// observers watch every call (the audit trail, telemetry), set up by
	// Open before the surface is built.
	observers []adapter.Observer
	// audit is the audit trail, nil under audit: off.
	audit *audit.Observer

	// warm is closed once the start's background work is done.
	warm chan struct{}

	mu          sync.Mutex
	listChanged func(*session.Session)
}

// Warm is closed once the work the start left to the background (the exec
// rules' programs hashed) is done: until then it takes a processor, and
// `yagent serve` keeps one for the calls besides it.
func (a *App) Warm() <-chan struct{} { return a.warm }

// Open resolves the profile, loads the plugins (from the spec cache when it
// can, so plugins start lazily) and builds the surface.
func Open(ctx context.Context, opts Options) (_ *App, err error) {
	cfgOpts, err := ConfigOptions(opts)
	if err != nil {
		return nil, err
	}
	ws, home := cfgOpts.Workspace, cfgOpts.Home
	// Authorizing the project (the "project" answer, or authorized_projects)
	// gives its calls a pass; it never lets its .yagent widen the profile.
	var startWarnings []string
	projects, err := authz.OpenProjects(filepath.Join(config.UserDir(home), authz.SettingsFile))
	if err != nil {
		startWarnings = append(startWarnings, fmt.Sprintf("project authorizations not loaded, none apply: %v", err))
		projects = nil
	}
	loaded, err := config.Load(cfgOpts)
	if err != nil {
		return nil, err
	}
	prof := loaded.Profile
	startWarnings = append(startWarnings, loaded.Warnings...)

	logs, err := newLoggers(opts.Log, opts.LogLevel, opts.LogFormat)
	if err != nil {
		return nil, err
	}
	hlog, logger := logs.plugins, logs.slog

	a := &App{Workspace: ws, Profile: prof, logger: logger, Warnings: startWarnings}
	probe := opts.ProbeSandbox
	if probe == nil {
		probe = ProbeSandbox
	}
	layers, cgRoot, cgErr := probe()
	a.SandboxLayers = SandboxLayers(layers, cgRoot, cgErr, prof.SandboxNetwork())
	a.SandboxStatus = SandboxLine(prof.SandboxMode(), SandboxOrigin(loaded), a.SandboxLayers)
	if opts.FullYolo {
		opts.Yolo = true
		a.Instructions = AutonomousInstructions
	}

	userDir := config.UserDir(home)
	dirs := opts.PluginDirs
	if dirs == nil {
		exe, _ := os.Executable()
		dirs = pluginmgr.DefaultDirs(exe)
	}
	lock := opts.LockFile
	if lock == "" {
		lock = filepath.Join(userDir, "plugins.lock")
	}
	cache := opts.CacheDir
	if cache == "" {
		cache = filepath.Join(userDir, "cache", "specs")
	}
	a.Bus = bus.New()
	hlog.RegisterSink(logSink{bus: a.Bus})

	// The authorization loop: passes (YOLO, session, project), then the
	// session's user, on the bus's critical queue. Plugins' own approval
	// requests go through it too.
	passes := &authz.Passes{Yolo: opts.Yolo, Projects: projects, Workspace: ws}
	a.Approver = authz.NewApprover(authz.ApproverOptions{
		Passes: passes,
		Loop:   authz.NewLoop(authz.LoopOptions{Bus: a.Bus, Logger: logger}),
		Logger: logger,
	})
	// Where the host loads code and policy from: no approval opens them
	// to a call's writes (plugin_dev_dir stays the exception it is: what
	// is built there runs unchecked by design).
	protected := slices.Concat([]string{userDir, lock, cache, config.ManagedDir(cfgOpts)}, dirs)
	gopts := guard.Options{Workspace: ws, Policy: prof.Rules(), HashFile: filepath.Join(cache, "exec-sums.json"),
		ExecWatch: layers.Seccomp, Protected: protected}
	if prof.SandboxMode() != policy.SandboxOff && prof.SandboxNetwork() == policy.NetworkProxy {
		a.egress = newEgress(prof.Network, opts.Resolver, hlog.Named("egress"), layers.NetNS)
		a.egress.ask = a.askNetwork
		gopts.Egress, gopts.PageEgress = a.egress.For, a.egress.Pages
		a.observers = append(a.observers, a.egress)
	}
	g := guard.New(gopts)
	pluginHost := authz.NewPluginHost(a.Approver, g)
	a.openTemps(prof.SandboxMode(), prof.Sandbox.TmpSizeMB, layers, tempKeep(ws, home, g.ReadRoots(nil), prof, os.Environ()))
	defer func() {
		if err != nil && a.temps != nil {
			a.temps.Close()
		}
	}()
	if prof.AuditMode() != config.AuditOff {
		a.audit = openAudit(prof, config.UserDir(home), logger)
		a.observers = append(a.observers, a.audit)
		pluginHost.SetRecorder(a.audit)
		if a.egress != nil {
			a.egress.record = a.audit.RecordNetwork
		}
		defer func() {
			if err != nil {
				_ = a.audit.Close()
			}
		}()
	}

	settings := map[string]map[string]string{}
	off := map[string]string{}
	for fam, kv := range prof.Plugins {
		settings[fam] = maps.Clone(kv)
		// The host's switch, not the plugin's setting.
		delete(settings[fam], config.PluginEnabledKey)
		if !prof.PluginEnabled(fam) {
			off[fam] = fmt.Sprintf("profile %s switches it off (plugins.%s.enabled: false)", prof.Name, fam)
		}
	}
	// A family the profile leaves off is never launched either, not even
	// to describe its tools.
	for _, fam := range toolspec.Families() {
		if _, already := off[fam]; !already && !slices.Contains(enabledFamilies(prof), fam) {
			off[fam] = fmt.Sprintf("profile %s leaves its family off (families: %s)", prof.Name, strings.Join(enabledFamilies(prof), ", "))
		}
	}
	// Plugins keep per-session state (plans, todos, shell logs) under one
	// private folder of the user's.
	for _, fam := range toolspec.Families() {
		if settings[fam] == nil {
			settings[fam] = map[string]string{}
		}
		if settings[fam]["state_dir"] == "" {
			settings[fam]["state_dir"] = filepath.Join(userDir, "state")
		}
	}
	if len(prof.SkillDirs) > 0 {
		if settings[toolspec.FamilyCognitive] == nil {
			settings[toolspec.FamilyCognitive] = map[string]string{}
		}
		settings[toolspec.FamilyCognitive]["skill_dirs"] = strings.Join(prof.SkillDirs, string(os.PathListSeparator))
	}

	managedLock, err := readManagedLock(loaded.ManagedLock)
	if err != nil {
		return nil, err
	}
	built := opts.PluginSums
	if built == nil {
		if built, err = pluginmgr.BuiltSums(); err != nil {
			a.Warnings = append(a.Warnings, fmt.Sprintf("%v; no plugin binary is vouched for by the build", err))
		}
	}
	// A plugin binary a command could have written runs only when a pin or
	// the build vouches for it.
	a.Plugins = pluginmgr.New(pluginmgr.Options{
		Dirs:            dirs,
		DevDir:          prof.PluginDevDir,
		Off:             off,
		CacheDir:        cache,
		LockFile:        lock,
		ManagedLock:     managedLock,
		ManagedLockFile: loaded.ManagedLock,
		Writable:        pluginWritable(ws, prof, layers.LandlockABI > 0, os.Environ(), a.tempRoot()),
		Built:           built,
		Logger:          hlog,
		Settings:        settings,
		FirstParty:      enabledFamilies(prof),
		Host:            pluginHost,
	})
	a.observers = append(a.observers, a.openTelemetry(ctx))
	plugins, warnings, err := a.Plugins.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("load plugins: %w", err)
	}
	a.warm = make(chan struct{})
	if prof.SandboxMode() != policy.SandboxOff {
		// Hashing the exec rules' programs (node's binary alone is 100 MB)
		// takes a hundred ms or more of a core. In the background, so the
		// first call does not wait for it, and once the plugins are
		// described, so the very first start does not share the cores
		// with it.
		go func() {
			defer close(a.warm)
			g.ExecPrograms()
		}()
	} else {
		close(a.warm)
	}
	if prof.PluginDevDir != "" {
		// First and every time: binaries no pin vouches for are running.
		a.Warnings = append(a.Warnings, devWarning(prof.PluginDevDir, loaded.Origins["plugin_dev_dir"], plugins))
	}
	a.Warnings = append(a.Warnings, warnings...)
	a.All = plugins
	a.LockFile = lock
	var sources []surface.Source
	// Why a plugin's tools are not on the surface, for the answer to a
	// call of one of them.
	unloaded := map[string]string{}
	for _, f := range toolspec.Families() {
		unloaded[f] = fmt.Sprintf("no plugin folder holds yagent-plugin-%s", f)
	}
	for _, p := range plugins {
		delete(unloaded, p.Name)
		if p.Refused != nil {
			unloaded[p.Name] = p.Refused.Error()
			continue // Load's warnings already say why
		}
		if p.Off != "" {
			unloaded[p.Name] = p.Off
			continue
		}
		a.Loaded = append(a.Loaded, p)
		sources = append(sources, surface.Source{
			Plugin: p.Name,
			Family: p.Name,
			Pinned: p.Pinned,
			Specs:  p.Specs,
			Exec:   p,
		})
	}

	a.Warnings = append(a.Warnings, g.Warnings()...)
	surf, err := surface.New(sources, surface.Options{
		Profile:       prof,
		Workspace:     ws,
		Yolo:          opts.Yolo,
		FullYolo:      opts.FullYolo,
		Guard:         g,
		Approver:      a.Approver,
		Helper:        a.Approver.Loop(),
		Bus:           a.Bus,
		Observer:      adapter.Observers(append(a.observers, opts.Observer)...),
		Logger:        logger,
		OnListChanged: a.notifyListChanged,
		Unloaded:      unloaded,
		Temp:          a.tempFor,
	})
	if err != nil {
		_ = a.Plugins.Close(ctx)
		return nil, err
	}
	a.Surface = surf
	for _, sk := range surf.Skipped() {
		a.Warnings = append(a.Warnings, fmt.Sprintf("skipped tool %s of plugin %s: %s", sk.Tool, sk.Plugin, sk.Reason))
	}
	return a, nil
}

// devWarning names the dev override folder, the layer that set it, and
// each plugin it serves, with the binary it stands in for.
func devWarning(dir string, origin []string, plugins []*pluginmgr.Plugin) string {
	var names []string
	for _, p := range plugins {
		if !p.Dev {
			continue
		}
		n := p.Name
		if p.Shadows != "" {
			n += " (instead of " + p.Shadows + ")"
		}
		names = append(names, n)
	}
	from := ""
	if len(origin) > 0 {
		by := origin[len(origin)-1]
		if by == "flags" {
			by = "--plugin-dev-dir" // the one flag that sets it
		}
		from = " (set by " + by + ")"
	}
	if len(names) == 0 {
		return fmt.Sprintf("plugin dev override %s%s holds no %s* binary: it overrides nothing", dir, from, pluginmgr.BinaryPrefix)
	}
	return fmt.Sprintf("plugin dev override in effect: the plugins of %s%s run without a pin check and count as unpinned: %s; "+
		"remove plugin_dev_dir (or --plugin-dev-dir) when done", dir, from, strings.Join(names, ", "))
}

// ConfigOptions returns the options Open resolves the profile with. `yagent
// profiles` takes the same path, so the profile it shows is the one that runs.
func ConfigOptions(opts Options) (config.LoadOptions, error) {
	ws, err := resolveWorkspace(opts.Workspace)
	if err != nil {
		return config.LoadOptions{}, err
	}
	home := opts.Home
	if home == "" {
		if home, err = os.UserHomeDir(); err != nil {
			return config.LoadOptions{}, fmt.Errorf("find home folder: %w", err)
		}
	}
	return config.LoadOptions{Profile: opts.Profile, Workspace: ws, Home: home, Overrides: opts.Overrides}, nil
}

// LoadProfile resolves the profile exactly as Open does, without starting
// anything.
func LoadProfile(opts Options) (*config.Loaded, error) {
	cfgOpts, err := ConfigOptions(opts)
	if err != nil {
		return nil, err
	}
	return config.Load(cfgOpts)
}

// readManagedLock reads the managed lock file at path, nil when there is
// none. A managed lock that cannot be read fails the start (fail closed).
func readManagedLock(path string) (*pluginmgr.Lock, error) {
	if path == "" {
		return nil, nil
	}
	lock, err := pluginmgr.ReadLock(path)
	if err != nil {
		return nil, fmt.Errorf("managed lock file: %w; only its admin can repair it", err)
	}
	return &lock, nil
}

// OnListChanged sets the function told when a session's tool list changes.
func (a *App) OnListChanged(fn func(*session.Session)) {
	a.mu.Lock()
	a.listChanged = fn
	a.mu.Unlock()
}

func (a *App) notifyListChanged(s *session.Session) {
	a.mu.Lock()
	fn := a.listChanged
	a.mu.Unlock()
	if fn != nil {
		fn(s)
	}
}

// Logger is the host's logger.
func (a *App) Logger() *slog.Logger { return a.logger }

// PluginNames lists the loaded plugins' names, sorted.
func (a *App) PluginNames() []string {
	var names []string
	for _, p := range a.Loaded {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}

// EndSession ends the agent session id in every running plugin: each
// releases what it held for that session alone (foreground commands, a
// browser tab, remembered reads, plan and todos); background commands live
// on, and so does the session's temp folder while one of them does. A
// failure is logged, not returned: the session is over either way.
func (a *App) EndSession(ctx context.Context, id string) {
	if a.Plugins == nil {
		return
	}
	if err := a.Plugins.EndSession(ctx, id); err != nil {
		a.logger.Warn("a plugin did not release what the session held", "session", id, "error", err)
	}
	// After the plugins: its foreground commands are gone; the folder
	// goes now, or once its last background command has ended.
	if a.temps != nil {
		a.temps.End(id)
	}
	if a.egress != nil {
		// Its background commands lose the network with the session.
		a.egress.End(id)
	}
}

// Close shuts the plugins down and waits for the start's background work
// (the program hash cache it saves); ctx bounds both.
func (a *App) Close(ctx context.Context) error {
	var errs []error
	if a.Plugins != nil {
		errs = append(errs, a.Plugins.Close(ctx))
	}
	if a.warm != nil {
		// The start's background work writes the program hash cache under
		// the user's folder: nothing of the App writes after Close.
		select {
		case <-a.warm:
		case <-ctx.Done():
			errs = append(errs, ctx.Err())
		}
	}
	if a.egress != nil {
		a.egress.Close()
	}
	if a.temps != nil {
		// After the plugins, whose commands in flight are gone: what a
		// background command holds is left to the next start's sweep.
		a.temps.Close()
	}
	if a.audit != nil {
		// After the plugins: their last calls are recorded first.
		errs = append(errs, a.audit.Close())
	}
	return errors.Join(errs...)
}

// openAudit returns the audit trail the profile configures: its folder
// (audit.path, else ~/.yagent/audit), size and rotation. Nothing is
// created until the first call is recorded.
func openAudit(prof *config.Profile, userDir string, logger *slog.Logger) *audit.Observer {
	dir := auditDir(prof, userDir)
	w := audit.NewWriter(audit.WriterOptions{Dir: dir, MaxSize: int64(prof.Audit.MaxSizeMB) << 20, Keep: prof.Audit.Keep})
	return audit.New(audit.Options{Mode: prof.AuditMode(), Writer: w, Logger: logger})
}

func auditDir(prof *config.Profile, userDir string) string {
	if prof.Audit.Path != "" {
		return prof.Audit.Path
	}
	return filepath.Join(userDir, "audit")
}

// AuditDir returns the folder of the audit trail the profile configures
// (audit.path, else ~/.yagent/audit), resolved exactly as Open does, and
// whether the profile named it.
func AuditDir(opts Options) (dir string, fromProfile bool, err error) {
	cfgOpts, err := ConfigOptions(opts)
	if err != nil {
		return "", false, err
	}
	ld, err := config.Load(cfgOpts)
	if err != nil {
		return "", false, err
	}
	return auditDir(ld.Profile, config.UserDir(cfgOpts.Home)), ld.Profile.Audit.Path != "", nil
}

func resolveWorkspace(ws string) (string, error) {
	if ws == "" {
		var err error
		if ws, err = os.Getwd(); err != nil {
			return "", fmt.Errorf("find the current folder: %w", err)
		}
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return "", fmt.Errorf("workspace %q: %w", ws, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("workspace %q: %w", ws, err)
	}
	if !fi.IsDir() {
		return "", errors.New("workspace " + abs + " is not a folder")
	}
	return abs, nil
}

func enabledFamilies(p *config.Profile) []string {
	if len(p.Families) == 0 {
		return toolspec.Families()
	}
	return append([]string(nil), p.Families...)
}
