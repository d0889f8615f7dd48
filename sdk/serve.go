package sdk

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/yagent/yagent/internal/wire"
)

// Plugin is what a plugin binary serves: its identity and its tools.
type Plugin struct {
	// Name is the plugin's name, the <name> of its yagent-plugin-<name> binary.
	Name string
	// Version is the plugin's own version, shown by `yagent plugins list`.
	Version string
	// Tools are the tools the plugin serves; names must be unique.
	Tools []Tool
	// OnShutdown, when set, runs when the host asks the plugin to shut down,
	// before the process is stopped: release what the plugin holds (browser
	// processes, background shells).
	OnShutdown func(context.Context) error
	// OnSessionEnd, when set, runs when the host says an agent session
	// ended (its client left, or it was idle too long): release what the
	// plugin holds for that session alone — its foreground commands, its
	// browser tab, what it remembers of the session's reads and plans.
	// Commands started in the background live on. It may run while calls
	// of other sessions are in flight, and for a session the plugin never
	// saw.
	OnSessionEnd func(ctx context.Context, sessionID string) error
	// MaxProcs, when above 0, caps the plugin's GOMAXPROCS unless the
	// environment sets GOMAXPROCS. A plugin whose calls are short waits
	// on the system (files, pipes) gains by 1: with a processor per core,
	// every call that arrives wakes an idle processor's thread to spin
	// for work that is not there, on a core the host needs. A plugin that
	// spreads one call's work over the cores (a parallel search) leaves
	// it at 0.
	MaxProcs int
}

// capProcs lowers GOMAXPROCS to n (above 0) unless the environment sets
// GOMAXPROCS.
func capProcs(n int) {
	if n > 0 && os.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) > n {
		runtime.GOMAXPROCS(n)
	}
}

// ProtocolVersion is the version of the host–plugin protocol spoken by this
// sdk; the go-plugin handshake refuses a plugin built for another one.
const ProtocolVersion = 2

// Environment variables the host sets when it launches a plugin.
const (
	// SettingsEnv holds the plugin's settings as a JSON object of strings;
	// read them with Settings.
	SettingsEnv = "YAGENT_PLUGIN_SETTINGS"
	// LogLevelEnv holds the level of the plugin's log (trace, debug, info,
	// warn, error); info when unset.
	LogLevelEnv = "YAGENT_PLUGIN_LOG_LEVEL"
)

// Handshake is the go-plugin handshake shared by the host and every plugin.
// The magic cookie only keeps a plugin binary from being run by hand; it is
// not a security measure. Treat it as a constant.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "YAGENT_PLUGIN",
	MagicCookieValue: "29ebc6b696a01aea86af0d31ec7276694bbb9516c9fa5e77",
}

// ServeOptions tunes ServerPluginSet, the in-process server sdk/plugintest
// runs. Serve builds the same server with Logger set to its JSON log on
// stderr and the rest zero, then serves it on what the host handed over.
type ServeOptions struct {
	// Logger receives the server's own log; nil discards it.
	Logger hclog.Logger
	// OnPanic handles a panic inside a tool. nil means Serve's behaviour:
	// write "panic: <value>" and the stack to the process's stderr and exit
	// with status 2, so the host reports plugin_crashed with the panic text.
	// A handler that returns instead (sdk/plugintest does) has its error
	// sent to the host as the call's error.
	OnPanic func(tool string, value any, stack []byte) error
	// CallConn, when set, is the plugin's end of a call channel, served in
	// this process: it runs the calls the host sends on the other end, as
	// in a plugin process the host launched. sdk/plugintest uses it. The
	// sdk takes it over: the channel ends when the host closes its end.
	CallConn net.Conn
}

// Serve serves p to the yagent host that launched this process and returns
// when the host stops it. It is the one call a plugin's main makes:
//
//	func main() {
//		sdk.Serve(sdk.Plugin{Name: "hello", Version: "0.1.0", Tools: []sdk.Tool{hello()}})
//	}
//
// Serve logs through go-hclog as JSON on stderr, at the level in
// YAGENT_PLUGIN_LOG_LEVEL, and makes that logger hclog's default so tools
// can use hclog.L(); slog's default logger (and with it the log package's)
// writes through it too. The host names the lines by the plugin and writes
// them in its own format. An invalid Plugin (no name, duplicate or invalid specs)
// is reported on stderr and exits with status 1. Run by hand, the binary
// says it is a plugin and exits. When the host is gone (SIGTERM, which the
// host has the kernel send on its death, or a change of parent) Serve runs
// OnShutdown, at most shutdownGrace long, and exits. The gRPC connection
// is mutual TLS with the identity the host hands over; a
// handover that cannot be read ends the process with status 1 rather than
// serving anyone who reaches the socket.
func Serve(p Plugin) {
	// First, before anything could start a command that inherits them.
	channel, channelErr := wire.TakeCallChannel()
	channelTLS, tlsErr := wire.TakeChannelTLS()
	capProcs(p.MaxProcs)
	logger := hclog.New(&hclog.LoggerOptions{
		Name:       p.Name,
		Level:      logLevel(os.Getenv(LogLevelEnv)),
		Output:     os.Stderr,
		JSONFormat: true,
	})
	hclog.SetDefault(logger)
	slog.SetDefault(slog.New(NewSlogHandler(logger)))
	if err := detachStdin(); err != nil {
		logger.Warn("stdin still shared with the host", "error", err)
	}
	if raw, ok := os.LookupEnv(SettingsEnv); ok {
		if _, err := parseSettings(raw); err != nil {
			logger.Error("settings ignored", "env", SettingsEnv, "error", err)
		}
	}
	// The host's death reaches the plugin as SIGTERM (on Linux, the
	// kernel's parent-death signal) or, elsewhere, as a change of parent.
	// Either way the plugin releases what it holds — OnShutdown kills the
	// process groups of commands still in flight, closes a browser — before
	// it exits.
	shutdown := onceShutdown(p.OnShutdown)
	p.OnShutdown = shutdown
	go exitWhenHostGone(logger, shutdown, runtime.GOOS != "linux")
	srv, err := newPluginServer(p, ServeOptions{Logger: logger})
	if err != nil {
		fmt.Fprintf(os.Stderr, "yagent plugin %q: %v\n", p.Name, err)
		os.Exit(1)
	}
	if channelErr != nil {
		logger.Warn("calls go over gRPC", "error", channelErr)
	} else if channel != nil {
		srv.serveOn(channel)
	}
	if tlsErr != nil {
		// Serving without it would take connections from anyone who can
		// reach the socket.
		fmt.Fprintf(os.Stderr, "yagent plugin %q: %v\n", p.Name, tlsErr)
		os.Exit(1)
	}
	cfg := &plugin.ServeConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: serverPluginSet(srv),
		GRPCServer:       wire.NewGRPCServer,
		Logger:           logger,
	}
	if channelTLS != nil {
		cfg.TLSProvider = func() (*tls.Config, error) { return channelTLS, nil }
	}
	plugin.Serve(cfg)
}

// ServerPluginSet returns the go-plugin plugin set that serves p, for
// plugin.ServeConfig.VersionedPlugins: sdk/plugintest runs a plugin
// in-process with it (Serve builds its own from the same server). It
// fails when p is invalid.
func ServerPluginSet(p Plugin, opts ServeOptions) (map[int]plugin.PluginSet, error) {
	srv, err := newPluginServer(p, opts)
	if err != nil {
		return nil, err
	}
	return serverPluginSet(srv), nil
}

func serverPluginSet(srv *pluginServer) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		ProtocolVersion: {wire.PluginSetKey: &grpcPlugin{server: srv}},
	}
}

// shutdownGrace bounds how long a plugin whose host is gone spends in
// OnShutdown before it exits anyway.
const shutdownGrace = 3 * time.Second

// onceShutdown wraps fn so that it runs at most once, whoever asks first:
// the host's Shutdown call, SIGTERM, or the orphan check.
func onceShutdown(fn func(context.Context) error) func(context.Context) error {
	var once sync.Once
	var err error
	return func(ctx context.Context) error {
		once.Do(func() {
			if fn != nil {
				err = fn(ctx)
			}
		})
		return err
	}
}

// exitWhenHostGone runs shutdown and exits on SIGTERM, or, when
// watchParent is set, once the plugin's parent, the host, is gone and it
// has been handed to another.
func exitWhenHostGone(logger hclog.Logger, shutdown func(context.Context) error, watchParent bool) {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	parent := os.Getppid()
	var tick <-chan time.Time
	if watchParent {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-term:
			logger.Info("terminated; shutting down")
		case <-tick:
			if os.Getppid() == parent {
				continue
			}
			logger.Info("the host is gone; shutting down")
		}
		break
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	go func() {
		<-ctx.Done()
		os.Exit(1)
	}()
	if err := shutdown(ctx); err != nil {
		logger.Warn("shutdown", "error", err)
	}
	// A host killed outright cannot remove the private folder it made for
	// this process; the plugin does, on its way out.
	if wd, err := os.Getwd(); err == nil {
		removeWorkdir(wd, os.TempDir())
	}
	os.Exit(0)
}

// WorkdirPrefix starts the name of the private, empty folder under the
// temp folder that the host makes for each plugin process to run in.
const WorkdirPrefix = "yagent-plugin-"

// removeWorkdir removes dir when it is such a private folder, directly
// under tmp, and still empty; anything else is left alone. It reports
// whether it removed dir.
func removeWorkdir(dir, tmp string) bool {
	if filepath.Dir(dir) != filepath.Clean(tmp) || !strings.HasPrefix(filepath.Base(dir), WorkdirPrefix) {
		return false
	}
	return os.Remove(dir) == nil // fails on a folder that is not empty
}

func logLevel(s string) hclog.Level {
	if l := hclog.LevelFromString(s); l != hclog.NoLevel {
		return l
	}
	return hclog.Info
}

// validate reports what makes p unservable: a start-up error, found before
// any model calls a tool.
func (p Plugin) validate() error {
	if p.Name == "" {
		return errors.New("plugin has no name")
	}
	var errs []error
	seen := make(map[string]bool, len(p.Tools))
	for i, t := range p.Tools {
		if t == nil {
			errs = append(errs, fmt.Errorf("tool %d is nil", i))
			continue
		}
		s := t.Spec()
		switch {
		case s.Name == "":
			errs = append(errs, fmt.Errorf("tool %d has no name", i))
			continue
		case seen[s.Name]:
			errs = append(errs, fmt.Errorf("tool %q is declared twice", s.Name))
		}
		seen[s.Name] = true
		if !s.Effect.Valid() {
			errs = append(errs, fmt.Errorf("tool %q: effect %q is not one of none, read, write, exec, network, browser, flow", s.Name, s.Effect))
		}
		for param, r := range s.Roles {
			if !r.Valid() {
				errs = append(errs, fmt.Errorf("tool %q: parameter %q has unknown role %q", s.Name, param, r))
			}
		}
		if len(s.InputSchema) == 0 || !json.Valid(s.InputSchema) {
			errs = append(errs, fmt.Errorf("tool %q: input schema is missing or not JSON", s.Name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("plugin %s: %w", p.Name, err)
	}
	return nil
}
