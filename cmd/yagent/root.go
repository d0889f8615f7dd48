package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/yagent/yagent/host/app"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// globals are the flags every command shares.
type globals struct {
	workspace  string
	profile    string
	yolo       bool
	fullYolo   bool
	pluginDirs []string
	devDir     string
	logLevel   string
	logFormat  string
	sandbox    string
}

func (g *globals) appOptions(log io.Writer) app.Options {
	var overrides map[string]any
	if g.sandbox != "" {
		// The user layer's authority: the managed layer's floor holds,
		// and -y/-Y leave the sandbox as it is.
		overrides = map[string]any{"sandbox.mode": g.sandbox}
	}
	if g.devDir != "" {
		if overrides == nil {
			overrides = map[string]any{}
		}
		overrides["plugin_dev_dir"] = absDevDir(g.devDir)
	}
	return app.Options{
		Overrides:  overrides,
		Workspace:  g.workspace,
		Profile:    g.profile,
		Yolo:       g.yolo || g.fullYolo,
		FullYolo:   g.fullYolo,
		PluginDirs: nilIfEmpty(g.pluginDirs),
		Log:        log,
		LogLevel:   g.logLevel,
		LogFormat:  g.logFormat,
		// A seam the CLI tests replace.
		ProbeSandbox: probeLayers,
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// exitError carries a process exit code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// logLevels are the levels --log-level takes, hclog's names.
var logLevels = []string{"trace", "debug", "info", "warn", "error", "off"}

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:           "yagent",
		Short:         "The hands of an LLM agent: a tool surface served by plugins",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate(versionText())
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	pf := root.PersistentFlags()
	pf.StringVarP(&g.workspace, "workspace", "w", "", "folder the tools work in (default: the current folder)")
	pf.StringVarP(&g.profile, "profile", "p", "", "profile name (default: coder)")
	_ = root.RegisterFlagCompletionFunc("profile", completeProfiles(g))
	pf.BoolVarP(&g.yolo, "yolo", "y", false, "approve every ask")
	pf.BoolVarP(&g.fullYolo, "full-yolo", "Y", false, "approve every ask, remove ask_user_for_help, tell the model to decide alone")
	pf.StringArrayVar(&g.pluginDirs, "plugin-dir", nil, "plugin folder to search (repeatable; replaces the default folders)")
	pf.StringVar(&g.devDir, "plugin-dev-dir", "", "dev override: use the plugins of this folder before all others, without a pin check, as unpinned")
	pf.StringVar(&g.sandbox, "sandbox", "", "contain commands in the kernel sandbox: on, off (the guard's check only) or required (refuse where a layer is missing); default: the profile's")
	pf.StringVar(&g.logLevel, "log-level", "warn", "log level on stderr: "+strings.Join(logLevels, ", "))
	_ = root.RegisterFlagCompletionFunc("log-level", cobra.FixedCompletions(logLevels, cobra.ShellCompDirectiveNoFileComp))
	pf.StringVar(&g.logFormat, "log-format", "text", "log format on stderr, the host's and the plugins' lines alike: text, or json (one JSON object a line; the start-up warnings and serve's banner become records too)")
	_ = root.RegisterFlagCompletionFunc("log-format", cobra.FixedCompletions(app.LogFormats, cobra.ShellCompDirectiveNoFileComp))
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if err := checkPlatform(); err != nil {
			return err
		}
		if !slices.Contains(logLevels, g.logLevel) {
			return fmt.Errorf("--log-level %q is not a level: give one of %s", g.logLevel, strings.Join(logLevels, ", "))
		}
		if !slices.Contains(app.LogFormats, g.logFormat) {
			return fmt.Errorf("--log-format %q is not a format: give one of %s", g.logFormat, strings.Join(app.LogFormats, ", "))
		}
		return nil
	}

	root.AddCommand(
		newServeCmd(g),
		newToolsCmd(g),
		newCallCmd(g),
		newPluginsCmd(g),
		newProfilesCmd(g),
		newDoctorCmd(g),
		newAuditCmd(g),
		newVersionCmd(),
	)
	return root
}

// openApp opens the host for one command and prints its start-up warnings
// on the command's stderr. The caller closes it.
func openApp(cmd *cobra.Command, g *globals) (*app.App, error) {
	a, err := app.Open(cmd.Context(), g.appOptions(cmd.ErrOrStderr()))
	if err != nil {
		return nil, err
	}
	for _, w := range a.Warnings {
		g.say(cmd, a, slog.LevelWarn, "yagent: warning: ", w)
	}
	return a, nil
}

// withApp is the RunE of a command that works on the host: it checks the
// command's --output value (when output is not nil) before anything is
// opened, opens the host, runs fn and closes the host.
func withApp(g *globals, output *string, fn func(cmd *cobra.Command, a *app.App, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if output != nil {
			if err := checkOutput(*output); err != nil {
				return err
			}
		}
		a, err := openApp(cmd, g)
		if err != nil {
			return err
		}
		defer a.Close(cmd.Context())
		return fn(cmd, a, args)
	}
}

// say writes one of the CLI's own lines on stderr: prefix and msg as text
// or, under --log-format json, msg as a host log record at level, so that
// stderr stays one JSON object a line (and --log-level applies to it).
func (g *globals) say(cmd *cobra.Command, a *app.App, level slog.Level, prefix, msg string) {
	if g.logFormat == "json" {
		a.Logger().Log(cmd.Context(), level, msg)
		return
	}
	fmt.Fprintln(cmd.ErrOrStderr(), prefix+msg)
}
