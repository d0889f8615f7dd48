package main

import (
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/yagent/yagent/host/app"
	"github.com/yagent/yagent/host/config"
)

// Shell completion that knows yagent: the tools `call` can call, the
// profiles --profile can name, the plugins `plugins pin|unpin|verify` take.
// Each opens what the command itself would open (its words go nowhere),
// so what completes is what would run.

// completeProfiles lists the profiles the layers offer.
func completeProfiles(g *globals) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		opts, err := app.ConfigOptions(g.appOptions(io.Discard))
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		infos, err := config.Names(opts)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, p := range infos {
			if strings.HasPrefix(p.Name, prefix) {
				out = append(out, cobra.CompletionWithDesc(p.Name, p.Description))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeTools lists the tools of the surface, for the first argument of
// `call`.
func completeTools(g *globals) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveDefault // the JSON input, or -
		}
		a, err := app.Open(cmd.Context(), g.appOptions(io.Discard))
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer a.Close(cmd.Context())
		var out []cobra.Completion
		for _, d := range a.Surface.All() {
			if strings.HasPrefix(d.Name, prefix) {
				out = append(out, cobra.CompletionWithDesc(d.Name, d.Brief))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completePlugins lists the plugins found (refused ones too: those are
// what a pin is for), leaving out those already on the line.
func completePlugins(g *globals) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		a, err := app.Open(cmd.Context(), g.appOptions(io.Discard))
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer a.Close(cmd.Context())
		var out []cobra.Completion
		for _, p := range a.All {
			if strings.HasPrefix(p.Name, prefix) && !slices.Contains(args, p.Name) && !slices.Contains(out, p.Name) {
				out = append(out, p.Name)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
