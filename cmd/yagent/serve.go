package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/host/app"
	"github.com/yagent/yagent/host/mcpserver"
)

// tokenEnv names the environment variable serve --http reads its bearer
// token from. serve removes it from its own environment before the plugins
// start, so no plugin or command inherits it; /proc/PID/environ still
// shows it (envTokenWarning).
const tokenEnv = "YAGENT_TOKEN"

// httpFlags are serve's flags for the HTTP front.
type httpFlags struct {
	addr         string
	tokenFile    string
	allowOrigins []string
	allowRemote  bool
	tlsCert      string
	tlsKey       string
	sessionIdle  time.Duration
	sessionCalls int
}

// defaultSessionCalls caps the calls one HTTP session runs at a time.
const defaultSessionCalls = 16

func newServeCmd(g *globals) *cobra.Command {
	var hf httpFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the tool surface over MCP on stdin/stdout, or over HTTP with --http",
		Long: fmt.Sprintf(`Serve the tool surface over MCP on stdin/stdout: one JSON-RPC message per line.

A bad line does not end the session: a line that is not JSON is answered with
-32700 (id null), one that is not a JSON-RPC message, a batch, or a line over
%d MiB with -32600, one nested over %d levels deep with -32602 (with the
message's id when it can be found), and the next line is read as usual.

With --http ADDR, serve MCP Streamable HTTP at http://ADDR%s instead; each MCP
session is its own yagent session. Every request to %s needs the bearer token
(--token-file, or $%s; generated and printed when neither is given); a
request with a foreign Origin is refused, a body over %d MiB too. ADDR must
be a loopback address unless --tls-cert/--tls-key or --allow-remote (a proxy
terminates TLS) are given. GET /healthz answers once listening, GET /readyz
once the plugins are described; a request to /mcp before that waits for them
(at most 30 s).`, mcpserver.DefaultMaxFrame>>20, mcpserver.MaxDepth,
			mcpserver.MCPPath, mcpserver.MCPPath, tokenEnv, mcpserver.DefaultMaxFrame>>20),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if hf.addr != "" {
				return serveHTTP(cmd, g, hf)
			}
			ctx := cmd.Context()
			a, err := openApp(cmd, g)
			if err != nil {
				return err
			}
			defer a.Close(context.WithoutCancel(ctx))
			srv := newMCPServer(a, 0)
			defer srv.Close()
			g.say(cmd, a, slog.LevelInfo, "", banner(a))
			g.say(cmd, a, slog.LevelInfo, "yagent: ", a.SandboxStatus)
			g.say(cmd, a, slog.LevelInfo, "yagent: ", a.TempStatus)
			defer killOnSecondInterrupt(a)()

			// After the start, whose plugins are launched, hashed and
			// described side by side, and after the work it left to the
			// background: on one processor that work would hold it for
			// the 10 ms time slices the scheduler gives, with the first
			// tools/list and calls waiting behind it.
			go whenReady(ctx, a.Warm(), func() { capProcs(stdioProcs) })
			err = srv.Run(ctx, &mcpserver.StdioTransport{Logger: a.Logger()})
			if ctx.Err() != nil {
				return nil
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&hf.addr, "http", "", "serve MCP Streamable HTTP on this address (e.g. 127.0.0.1:7777) instead of stdio")
	f.StringVar(&hf.tokenFile, "token-file", "", "file holding the bearer token HTTP clients must send (default: $"+tokenEnv+", else a generated one)")
	f.StringArrayVar(&hf.allowOrigins, "allow-origin", nil, "an Origin to accept besides loopback ones on the serving port, e.g. https://ide.example.com (repeatable)")
	f.BoolVar(&hf.allowRemote, "allow-remote", false, "serve plain HTTP on a non-loopback address: a proxy in front terminates TLS")
	f.StringVar(&hf.tlsCert, "tls-cert", "", "TLS certificate file (PEM); with --tls-key, serve HTTPS")
	f.StringVar(&hf.tlsKey, "tls-key", "", "TLS private key file (PEM); with --tls-cert, serve HTTPS")
	f.DurationVar(&hf.sessionIdle, "session-idle", mcpserver.DefaultSessionIdle, "end an HTTP session after this long without a request (0: never)")
	f.IntVar(&hf.sessionCalls, "session-calls", defaultSessionCalls, "the most tool calls one HTTP session runs at once; more fail with too_many_calls (0: no cap)")
	return cmd
}

func newMCPServer(a *app.App, maxCalls int) *mcpserver.Server {
	srv := mcpserver.New(a.Surface, &mcpserver.Options{
		Version:          version,
		Instructions:     a.Instructions,
		Logger:           a.Logger(),
		MaxCallsInFlight: maxCalls,
		OnSessionEnd:     a.EndSession,
		Bus:              a.Bus,
	})
	a.OnListChanged(func(s *session.Session) { srv.NotifyListChanged(s) })
	return srv
}

// killOnSecondInterrupt makes a second interrupt kill every process group
// the plugins reported, then exit: go-plugin plugins ignore SIGINT, so the
// host has to do it. The returned func stops listening.
func killOnSecondInterrupt(a *app.App) func() {
	hard := make(chan os.Signal, 2)
	signal.Notify(hard, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-hard
		<-hard
		a.Plugins.KillReportedGroups()
		os.Exit(130)
	}()
	return func() { signal.Stop(hard) }
}

// checkHTTPAddr refuses plain HTTP off loopback: the token would cross the
// network in the clear.
func checkHTTPAddr(hf httpFlags) (tls bool, err error) {
	if (hf.tlsCert == "") != (hf.tlsKey == "") {
		return false, errors.New("serve: give --tls-cert and --tls-key together")
	}
	tls = hf.tlsCert != ""
	host, _, err := net.SplitHostPort(hf.addr)
	if err != nil {
		return false, fmt.Errorf("serve: --http %q: want host:port, e.g. 127.0.0.1:7777: %w", hf.addr, err)
	}
	if !mcpserver.IsLoopbackHost(host) && !tls && !hf.allowRemote {
		return false, fmt.Errorf("serve: --http %q is not a loopback address: plain HTTP there would send the token in the clear; give --tls-cert and --tls-key, or --allow-remote when a proxy in front terminates TLS", hf.addr)
	}
	return tls, nil
}

// Where serve --http's bearer token came from.
const (
	tokenFromFile      = "file"
	tokenFromEnv       = "env"
	tokenFromGenerated = "generated"
)

// httpToken returns the bearer token from --token-file, else $YAGENT_TOKEN,
// else a fresh one, and where it came from; it removes $YAGENT_TOKEN from
// the environment the plugins will inherit.
func httpToken(hf httpFlags) (token, from string, err error) {
	env := os.Getenv(tokenEnv)
	if err := os.Unsetenv(tokenEnv); err != nil {
		return "", "", fmt.Errorf("serve: unset %s: %w", tokenEnv, err)
	}
	switch {
	case hf.tokenFile != "":
		b, err := os.ReadFile(hf.tokenFile)
		if err != nil {
			return "", "", fmt.Errorf("serve: --token-file: %w", err)
		}
		token = strings.TrimSpace(string(b))
		if token == "" {
			return "", "", fmt.Errorf("serve: --token-file %s is empty; put the token in it", hf.tokenFile)
		}
		return token, tokenFromFile, nil
	case strings.TrimSpace(env) != "":
		return strings.TrimSpace(env), tokenFromEnv, nil
	}
	return mcpserver.NewToken(), tokenFromGenerated, nil
}

// envTokenWarning is serve's line when the token came from $YAGENT_TOKEN:
// unsetting it changes the environment the plugins inherit, not the one
// the kernel keeps for this process, which /proc/PID/environ shows to
// every process of the user, a command run with the sandbox off among
// them (Landlock keeps sandboxed ones out).
func envTokenWarning(pid int) string {
	return fmt.Sprintf("yagent: warning: the bearer token came from $%s, which stays readable in /proc/%d/environ to every process of this user, "+
		"commands run with the sandbox off among them; give it with --token-file instead", tokenEnv, pid)
}

// clientConfig is a client configuration ready to paste (the mcpServers
// shape most MCP clients read).
func clientConfig(url, token string) string {
	cfg := map[string]any{"mcpServers": map[string]any{"yagent": map[string]any{
		"type":    "http",
		"url":     url,
		"headers": map[string]string{"Authorization": "Bearer " + token},
	}}}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	return string(b)
}

func serveHTTP(cmd *cobra.Command, g *globals, hf httpFlags) error {
	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	useTLS, err := checkHTTPAddr(hf)
	if err != nil {
		return err
	}
	token, from, err := httpToken(hf)
	if err != nil {
		return err
	}
	if from == tokenFromEnv {
		fmt.Fprintln(stderr, envTokenWarning(os.Getpid()))
	}
	idle := hf.sessionIdle
	if idle == 0 {
		idle = -1 // the flag's 0 means never
	}
	opts := mcpserver.HTTPOptions{
		Token:        token,
		AllowOrigins: hf.allowOrigins,
		SessionIdle:  idle,
	}
	var procs *procScaler
	if os.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) > 1 {
		procs = newProcScaler()
		opts.InFlight = procs.add
	}
	front, err := mcpserver.NewHTTPFront(opts)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	ln, err := net.Listen("tcp", hf.addr)
	if err != nil {
		return fmt.Errorf("serve: listen on %s: %w", hf.addr, err)
	}
	// A name like localhost is checked again where it resolved to.
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() && !useTLS && !hf.allowRemote {
		ln.Close()
		return fmt.Errorf("serve: --http %q listens on %s, not loopback; give --tls-cert and --tls-key, or --allow-remote when a proxy terminates TLS", hf.addr, tcp)
	}
	scheme := "http"
	if useTLS {
		scheme = "https"
	}
	url := scheme + "://" + ln.Addr().String() + mcpserver.MCPPath
	// No read or write timeout: an SSE stream stays open as long as a call
	// runs. Slow headers and idle keep-alive connections are cut.
	hs := &http.Server{Handler: front, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ConnContext: front.ConnContext}
	ln = front.Listener(ln)
	served := make(chan error, 1)
	go func() {
		if useTLS {
			served <- hs.ServeTLS(ln, hf.tlsCert, hf.tlsKey)
		} else {
			served <- hs.Serve(ln)
		}
	}()
	stop := func() {
		// Open SSE streams never end on their own: give them a moment,
		// then cut them.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if hs.Shutdown(sctx) != nil {
			_ = hs.Close()
		}
	}
	fmt.Fprintf(stderr, "yagent: serving MCP over HTTP at %s (GET /healthz, /readyz)\n", url)
	if from == tokenFromGenerated {
		fmt.Fprintf(stderr, "yagent: no --token-file or $%s given; generated a bearer token for this run. Client configuration:\n%s\n", tokenEnv, clientConfig(url, token))
	}

	a, err := openApp(cmd, g)
	if err != nil {
		stop()
		return err
	}
	defer a.Close(context.WithoutCancel(ctx))
	defer stop() // before the plugins close: no request reaches a closed plugin
	srv := newMCPServer(a, hf.sessionCalls)
	defer srv.Close()
	front.Attach(srv)
	if procs != nil {
		go whenReady(ctx, a.Warm(), procs.start)
	}
	g.say(cmd, a, slog.LevelInfo, "", banner(a))
	g.say(cmd, a, slog.LevelInfo, "yagent: ", a.SandboxStatus)
	g.say(cmd, a, slog.LevelInfo, "yagent: ", a.TempStatus)
	defer killOnSecondInterrupt(a)()

	select {
	case <-ctx.Done():
		return nil
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	}
}

func banner(a *app.App) string {
	defs := a.Surface.All()
	listed := len(a.Surface.List(session.New("banner")))
	return fmt.Sprintf("yagent %s: %d tools (%d listed) from %d plugins [%s]; profile %s; workspace %s",
		version, len(defs), listed, len(a.Loaded), strings.Join(a.PluginNames(), " "), a.Profile.Name, a.Workspace)
}
