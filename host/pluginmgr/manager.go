package pluginmgr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/yagent/yagent/internal/remote"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// Options configures a Manager.
type Options struct {
	// Dirs are the plugin folders in search order (see DefaultDirs).
	Dirs []string
	// DevDir is the dev override folder, searched before Dirs; "" = none.
	// Its plugins are loaded without a pin check against LockFile and
	// count as unpinned (their declared effects are not trusted); a
	// plugin ManagedLock pins must still match it.
	DevDir string
	// Off names the plugins switched off, with why: they are hashed (so
	// they can be pinned) but never launched, and cannot Execute.
	Off map[string]string
	// CacheDir holds the spec cache and the sha index; "" means
	// ~/.yagent/cache/specs (no cache when the home folder is unknown).
	CacheDir string
	// LockFile is the pin lock file; "" means no pinning. A lock file
	// that does not exist pins nothing.
	LockFile string
	// ManagedLock holds the admin's pins (a lock the user cannot write),
	// read by the caller; nil = none. A plugin it names must have that sum,
	// whatever LockFile says, or it is refused before it is ever launched;
	// its binary is hashed on every Load, never taken from the sha index,
	// which is the user's to write. ManagedLockFile names it in messages.
	ManagedLock     *Lock
	ManagedLockFile string
	// Writable judges a plugin binary's path: why a command could have
	// written it (it lies in a folder commands can write, or a link on its
	// way does), "" when none could. Such a binary is launched (or its
	// cached specs used) only when something vouches for it: a pin of
	// LockFile or ManagedLock that it matches, or its sum in Built;
	// otherwise it is refused with an *UntrustedError. DevDir's binaries
	// are not judged. nil judges nothing: every folder is trusted.
	Writable func(path string) (why string)
	// Built holds the sha256 of the plugin binaries the host was built
	// with, by plugin name (BuiltSums): a binary with its name's sum is
	// vouched for wherever it lies. nil = none.
	Built map[string]string
	// Logger receives the manager's log and the plugins' logs; nil
	// discards them.
	Logger hclog.Logger
	// Host answers the plugins' approval requests; nil denies them with a
	// reason.
	Host HostServices
	// Settings holds each plugin's settings by plugin name, passed to it
	// at launch (sdk.Settings).
	Settings map[string]map[string]string
	// FirstParty names the plugins whose absence is warned about (fs,
	// shell, search, browser, cognitive).
	FirstParty []string
	// Backoff is how long a plugin's next start waits after its attempt-th
	// consecutive crash (0-based); nil means DefaultBackoff.
	Backoff func(attempt int) time.Duration
	// GRPCCalls sends every call as a gRPC stream, as to a plugin that
	// does not serve a call channel (remote.CallChannel): for comparisons.
	GRPCCalls bool
}

// HostServices answers what plugins ask of the host while a call runs.
// Progress needs no service: it reaches the progress func given to the
// call's Execute.
type HostServices interface {
	// RequestApproval judges or asks, for the call described by call (ID,
	// Tool, SessionID, Workspace...) of plugin, and blocks for the answer.
	// ctx is the call's own context: it carries the values of the ctx
	// given to Execute (the host's session) and ends when the call does.
	// Only calls in flight get here; the sdk refuses the rest.
	RequestApproval(ctx context.Context, plugin string, call sdk.CallInfo, req sdk.ApprovalRequest) (sdk.ApprovalResponse, error)
}

// DefaultBackoff waits 100ms·2^attempt, at most 5s.
func DefaultBackoff(attempt int) time.Duration {
	if attempt < 0 {
		attempt = 0
	}
	if attempt > 6 {
		return 5 * time.Second
	}
	return min(100*time.Millisecond<<attempt, 5*time.Second)
}

// Manager finds, launches and supervises the plugins. Its methods are safe
// for concurrent use; Load is called once.
type Manager struct {
	opts   Options
	logger hclog.Logger
	// hashFile hashes a binary; a seam so tests can count hashes.
	hashFile func(path string) (string, error)
	// now is the clock the sha index judges a binary's age by; a seam so
	// tests can memoize a binary built a moment ago.
	now func() time.Time
	// crashGrace bounds the wait for a plugin process to exit after its
	// connection failed, before the failure is called a crash anyway.
	crashGrace time.Duration

	done chan struct{} // closed by Close

	// telemetry is set by SetTelemetry; nil means off.
	telemetry telemetryPtr

	mu      sync.Mutex
	plugins []*Plugin
	closed  bool
}

// New returns a Manager; nothing is searched or launched before Discover or
// Load.
func New(opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Backoff == nil {
		opts.Backoff = DefaultBackoff
	}
	if opts.CacheDir == "" {
		if home, err := os.UserHomeDir(); err == nil {
			opts.CacheDir = filepath.Join(home, ".yagent", "cache", "specs")
		}
	}
	return &Manager{
		opts:       opts,
		logger:     opts.Logger,
		hashFile:   policy.SumFile,
		now:        time.Now,
		crashGrace: 2 * time.Second,
		done:       make(chan struct{}),
	}
}

var errClosed = errors.New("the plugin manager is closed")

// managedPin returns the admin's pin of the plugin name, if any.
func (m *Manager) managedPin(name string) (LockEntry, bool) {
	if m.opts.ManagedLock == nil {
		return LockEntry{}, false
	}
	e, ok := m.opts.ManagedLock.Plugins[name]
	return e, ok
}

// Load discovers the plugins and describes each one: from the spec cache
// when it holds the binary's sum (the plugin then starts on its first
// Execute), else by launching it and asking (the answer is cached). A
// plugin whose binary does not match its pin, that a command could have
// written with nothing vouching for it (Options.Writable), or that cannot
// be launched or described, is returned with Refused set and a warning;
// its SHA256 is set all the same, so it can be pinned. The warnings
// include Discover's, and a lock file that cannot be read (every plugin is
// then unpinned). The error is for ctx ending.
func (m *Manager) Load(ctx context.Context) ([]*Plugin, []string, error) {
	found, warnings := m.Discover()
	lock := Lock{Plugins: map[string]LockEntry{}}
	if m.opts.LockFile != "" {
		var err error
		if lock, err = ReadLock(m.opts.LockFile); err != nil {
			// Pins that cannot be read vouch for nothing: every plugin
			// loads unpinned (a custom plugin's declared effects are then
			// not trusted), and the warning names the file and the fix.
			lock = Lock{Plugins: map[string]LockEntry{}}
			warnings = append(warnings, fmt.Sprintf("no plugin is trusted as pinned: %v", WithUserFix(err)))
		}
	}
	idx := loadIndex(m.opts.CacheDir)
	// The binaries are hashed side by side: on a first start, with no sum
	// remembered, hashing them one after another was most of the wait.
	type hashed struct {
		sum string
		id  fileID
		err error
	}
	sums := make([]hashed, len(found))
	var hashing sync.WaitGroup
	for i, f := range found {
		hashing.Go(func() {
			h := &sums[i]
			if _, byAdmin := m.managedPin(f.Name); byAdmin {
				h.sum, h.id, h.err = hashWithID(f.Path, m.hashFile)
			} else {
				h.sum, h.id, h.err = idx.sum(f.Path, m.hashFile, m.now)
			}
		})
	}
	hashing.Wait()
	plugins := make([]*Plugin, 0, len(found))
	var launch []*Plugin
	for i, f := range found {
		p := &Plugin{Name: f.Name, Path: f.Path, Dev: f.Dev, Shadows: f.Shadows, m: m, groups: map[int]bool{}}
		plugins = append(plugins, p)
		sum, id, err := sums[i].sum, sums[i].id, sums[i].err
		managed, byAdmin := m.managedPin(f.Name)
		if err != nil {
			p.Refused = fmt.Errorf("plugin %s: %w", p.Name, err)
			warnings = append(warnings, p.Refused.Error())
			continue
		}
		p.SHA256, p.id = sum, id
		p.Built = m.opts.Built[p.Name] == sum
		if why, off := m.opts.Off[p.Name]; off {
			// Hashed, so it can be pinned; never launched, not even to
			// describe itself.
			p.Off = why
			continue
		}
		pinned, err := lock.Check(p.Name, p.Path, sum)
		if p.Dev {
			// The point of the override: a binary being rebuilt is not
			// held to the user's pin. The admin's pin still holds.
			err = nil
		}
		if byAdmin {
			pinned, err = true, nil
			if sum != managed.SHA256 {
				err = fmt.Errorf("plugin %s refused: %s has sha256 %s but the managed lock file %s pins %s; ask the admin to pin the new binary there",
					p.Name, p.Path, sum, m.opts.ManagedLockFile, managed.SHA256)
			}
		}
		if err != nil {
			p.Refused = err
			if !p.Dev && m.opts.Writable != nil {
				// Said by `plugins pin`, which re-pins such a binary only
				// when named.
				p.Writable = m.opts.Writable(p.Path)
			}
			warnings = append(warnings, err.Error())
			continue
		}
		// A dev binary is trusted as no pin vouches for it.
		p.Pinned = pinned && !p.Dev
		if !p.Dev && !pinned && !p.Built && m.opts.Writable != nil {
			// Nothing vouches for this binary: it runs only where no
			// command could have put it, not even to describe itself.
			if why := m.opts.Writable(p.Path); why != "" {
				p.Writable = why
				p.Refused = &UntrustedError{Name: p.Name, Path: p.Path, Why: why, Built: m.opts.Built}
				warnings = append(warnings, p.Refused.Error())
				continue
			}
		}
		if d, ok := loadSpecs(m.opts.CacheDir, sum); ok && d.Name == p.Name {
			p.Version, p.Protocol, p.Specs = d.Version, d.ProtocolVersion, d.Specs
			continue
		}
		launch = append(launch, p)
	}
	if err := idx.save(m.opts.CacheDir); err != nil {
		warnings = append(warnings, fmt.Sprintf("plugin sha index not saved: %v", err))
	}

	var wg sync.WaitGroup
	errs := make([]error, len(launch))
	for i, p := range launch {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inst, err := p.instance(ctx)
			if err != nil {
				errs[i] = err
				return
			}
			p.Version, p.Protocol, p.Specs = inst.desc.Version, inst.desc.ProtocolVersion, inst.desc.Specs
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, warnings, fmt.Errorf("load plugins: %w", err)
	}
	for i, p := range launch {
		if errs[i] != nil {
			p.Refused = fmt.Errorf("plugin %s cannot be used: %w", p.Name, errs[i])
			warnings = append(warnings, p.Refused.Error())
			continue
		}
		if err := storeSpecs(m.opts.CacheDir, p.SHA256, remote.Description{
			Name: p.Name, Version: p.Version, ProtocolVersion: p.Protocol, Specs: p.Specs,
		}); err != nil {
			warnings = append(warnings, fmt.Sprintf("plugin %s: specs not cached: %v", p.Name, err))
		}
	}

	m.mu.Lock()
	m.plugins = plugins
	m.mu.Unlock()
	return plugins, warnings, nil
}

// Plugins returns the plugins of the last Load, sorted by name.
func (m *Manager) Plugins() []*Plugin {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*Plugin(nil), m.plugins...)
}

// Plugin returns the loaded plugin called name, nil when there is none.
func (m *Manager) Plugin(name string) *Plugin {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := sort.Search(len(m.plugins), func(i int) bool { return m.plugins[i].Name >= name })
	if i < len(m.plugins) && m.plugins[i].Name == name {
		return m.plugins[i]
	}
	return nil
}

// KillReportedGroups sends SIGKILL to every process group a plugin reported
// live and has not reported ended, and kills the cgroups of the commands
// each running plugin has in flight: the host's hard exit on a second
// signal.
func (m *Manager) KillReportedGroups() {
	for _, p := range m.Plugins() {
		p.killGroups()
		p.mu.Lock()
		inst := p.inst
		p.mu.Unlock()
		p.killLiveCgroups(inst)
	}
}

// EndSession tells every running plugin that the agent session id ended,
// so that each releases what it holds for that session alone (its
// OnSessionEnd). A plugin not running holds nothing of it and is not
// started. Plugins are told side by side; the error joins their failures.
func (m *Manager) EndSession(ctx context.Context, id string) error {
	return eachPlugin(m.Plugins(), func(p *Plugin) error { return p.endSession(ctx, id) })
}

// eachPlugin runs fn on every plugin side by side and joins the errors.
func eachPlugin(plugins []*Plugin, fn func(*Plugin) error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(plugins))
	for i, p := range plugins {
		wg.Go(func() { errs[i] = fn(p) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close asks every running plugin to shut down (its OnShutdown), stops its
// process, and kills the process groups still reported live. Later calls
// fail with plugin_unavailable.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	close(m.done)
	plugins := append([]*Plugin(nil), m.plugins...)
	m.mu.Unlock()
	err := eachPlugin(plugins, func(p *Plugin) error { return p.stop(ctx) })
	if t := m.tel(); t != nil {
		err = errors.Join(err, t.Shutdown(ctx))
	}
	return err
}

// pluginEnv is the environment of plugin name: the host's, with the
// plugin's settings and log level, and sdk.TelemetryEnv only when the
// host's telemetry is on (never inherited).
func (m *Manager) pluginEnv(name string) ([]string, error) {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, sdk.SettingsEnv+"=") && !strings.HasPrefix(kv, sdk.TelemetryEnv+"=") {
			env = append(env, kv)
		}
	}
	if m.tel() != nil {
		env = append(env, sdk.TelemetryEnv+"=1")
	}
	if s := m.opts.Settings[name]; len(s) > 0 {
		b, err := json.Marshal(s)
		if err != nil {
			return nil, err
		}
		env = append(env, sdk.SettingsEnv+"="+string(b))
	}
	if os.Getenv(sdk.LogLevelEnv) == "" {
		env = append(env, sdk.LogLevelEnv+"="+m.logger.GetLevel().String())
	}
	return env, nil
}
