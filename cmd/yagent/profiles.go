package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/yagent/yagent/host/app"
	"github.com/yagent/yagent/host/config"
)

func newProfilesCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "profiles [list|show [NAME]]",
		Short: "List profiles, or show one resolved",
		Args:  cobra.NoArgs,
	}
	var listOut, showOut string
	list := &cobra.Command{
		Use:   "list",
		Short: "List built-in, user, managed and project profiles",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(listOut); err != nil {
				return err
			}
			opts, err := app.ConfigOptions(g.appOptions(cmd.ErrOrStderr()))
			if err != nil {
				return err
			}
			infos, err := config.Names(opts)
			if err != nil {
				return err
			}
			if listOut == outputJSON {
				type entry struct {
					Name        string `json:"name"`
					Source      string `json:"source"`
					Description string `json:"description"`
				}
				out := []entry{}
				for _, p := range infos {
					out = append(out, entry{Name: p.Name, Source: p.Source, Description: p.Description})
				}
				return writeJSON(cmd.OutOrStdout(), out)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSOURCE\tDESCRIPTION")
			for _, p := range infos {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, p.Source, p.Description)
			}
			return tw.Flush()
		},
	}
	show := &cobra.Command{
		Use:   "show [NAME]",
		Short: "Show a profile as the host resolves it (no NAME: the one that runs), each key with the layers it came from",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(showOut); err != nil {
				return err
			}
			// The options app.Open uses, so what is shown is what runs.
			opts := g.appOptions(cmd.ErrOrStderr())
			if len(args) == 1 {
				opts.Profile = args[0]
			}
			ld, err := app.LoadProfile(opts)
			if err != nil {
				return err
			}
			for _, w := range ld.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "yagent: warning:", w)
			}
			if showOut == outputJSON {
				return writeJSON(cmd.OutOrStdout(), struct {
					Profile *config.Profile     `json:"profile"`
					Layers  []string            `json:"layers"`
					Origins map[string][]string `json:"origins"`
				}{ld.Profile, ld.Layers, ld.Origins})
			}
			b, err := ld.Show()
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(b)
			return err
		},
	}
	outputFlag(list, &listOut)
	outputFlag(show, &showOut)
	cmd.AddCommand(list, show)
	cmd.RunE = list.RunE
	return cmd
}
