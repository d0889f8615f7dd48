package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/yagent/yagent/host/app"
	"github.com/yagent/yagent/host/mcpserver"
	"github.com/yagent/yagent/host/session"
)

func newServeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Serve the tool surface over MCP on stdin/stdout",
		Long: fmt.Sprintf(`Serve the tool surface over MCP on stdin/stdout: one JSON-RPC message per line.

A bad line does not end the session: a line that is not JSON is answered with
-32700 (id null), one that is not a JSON-RPC message, a batch, or a line over
%d MiB with -32600, one nested over %d levels deep with -32602 (with the
message's id when it can be found), and the next line is read as usual.`, mcpserver.DefaultMaxFrame>>20, mcpserver.MaxDepth),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			stderr := cmd.ErrOrStderr()
			a, err := openApp(cmd, g)
			if err != nil {
				return err
			}
			defer a.Close(context.WithoutCancel(ctx))
			srv := mcpserver.New(a.Surface, &mcpserver.Options{
				Version:      version,
				Instructions: a.Instructions,
				Logger:       a.Logger(),
			})
			a.OnListChanged(func(s *session.Session) { srv.NotifyListChanged(s) })
			fmt.Fprintln(stderr, banner(a))
			fmt.Fprintln(stderr, "yagent:", a.SandboxStatus)

			// A second interrupt kills every process group the plugins
			// reported, then exits: go-plugin plugins ignore SIGINT, so the
			// host has to do it.
			hard := make(chan os.Signal, 2)
			signal.Notify(hard, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(hard)
			go func() {
				<-hard
				<-hard
				a.Plugins.KillReportedGroups()
				os.Exit(130)
			}()

			err = srv.Run(ctx, &mcpserver.StdioTransport{Logger: a.Logger()})
			if ctx.Err() != nil {
				return nil
			}
			return err
		},
	}
}

func banner(a *app.App) string {
	defs := a.Surface.All()
	listed := len(a.Surface.List(session.New("banner")))
	return fmt.Sprintf("yagent %s: %d tools (%d listed) from %d plugins [%s]; profile %s; workspace %s",
		version, len(defs), listed, len(a.Loaded), strings.Join(a.PluginNames(), " "), a.Profile.Name, a.Workspace)
}
