package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/yagent/yagent/host/config"
)

func newProfilesCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "profiles [list|show NAME]",
		Short: "List profiles, or show one resolved",
		Args:  cobra.NoArgs,
	}
	loadOpts := func() (config.LoadOptions, error) {
		ws, err := workspaceOf(g)
		if err != nil {
			return config.LoadOptions{}, err
		}
		return config.LoadOptions{Profile: g.profile, Workspace: ws}, nil
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List built-in, user and project profiles",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := loadOpts()
			if err != nil {
				return err
			}
			infos, err := config.Names(opts)
			if err != nil {
				return err
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
		Use:   "show NAME",
		Short: "Show a profile as resolved with the config files, environment and flags",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := loadOpts()
			if err != nil {
				return err
			}
			b, err := config.Show(opts, args[0])
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(b)
			return err
		},
	}
	cmd.AddCommand(list, show)
	cmd.RunE = list.RunE
	return cmd
}
