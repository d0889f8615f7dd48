package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/yagent/yagent/host/pluginmgr"
)

func newPluginsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugins [list|pin|verify]",
		Short: "List plugins, pin their checksums, verify them against the lock file",
		Args:  cobra.NoArgs,
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the plugins found, in search order",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := openApp(cmd, g)
			if err != nil {
				return err
			}
			defer a.Close(cmd.Context())
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tVERSION\tTOOLS\tPINNED\tSHA256\tPATH")
			for _, p := range a.All {
				pinned := "no"
				switch {
				case p.Refused != nil:
					pinned = "REFUSED"
				case p.Pinned:
					pinned = "yes"
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", p.Name, p.Version, len(p.Specs), pinned, short(p.SHA256), p.Path)
			}
			return tw.Flush()
		},
	}
	pin := &cobra.Command{
		Use:   "pin [NAME...]",
		Short: "Record the sha256 of the named plugins (all when none is named) in the lock file",
		RunE: func(cmd *cobra.Command, names []string) error {
			a, err := openApp(cmd, g)
			if err != nil {
				return err
			}
			defer a.Close(cmd.Context())
			want := map[string]bool{}
			for _, n := range names {
				want[n] = true
			}
			var chosen []*pluginmgr.Plugin
			for _, p := range a.All {
				if len(want) == 0 || want[p.Name] {
					chosen = append(chosen, p)
					delete(want, p.Name)
				}
			}
			for n := range want {
				return fmt.Errorf("no plugin named %q found; `yagent plugins list` shows what is found", n)
			}
			if err := pluginmgr.WriteLock(a.LockFile, chosen); err != nil {
				return err
			}
			for _, p := range chosen {
				fmt.Fprintf(cmd.OutOrStdout(), "pinned %s %s\n", p.Name, p.SHA256)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "lock file:", a.LockFile)
			return nil
		},
	}
	verify := &cobra.Command{
		Use:   "verify",
		Short: "Compare every plugin binary with the lock file; exit 1 on a mismatch",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := openApp(cmd, g)
			if err != nil {
				return err
			}
			defer a.Close(cmd.Context())
			bad := 0
			for _, p := range a.All {
				switch {
				case p.Refused != nil:
					bad++
					fmt.Fprintf(cmd.OutOrStdout(), "MISMATCH  %s: %v\n", p.Name, p.Refused)
				case p.Pinned:
					fmt.Fprintf(cmd.OutOrStdout(), "ok        %s %s\n", p.Name, short(p.SHA256))
				default:
					fmt.Fprintf(cmd.OutOrStdout(), "unpinned  %s %s\n", p.Name, short(p.SHA256))
				}
			}
			if bad > 0 {
				return fmt.Errorf("%d plugin(s) do not match %s", bad, a.LockFile)
			}
			return nil
		},
	}
	cmd.AddCommand(list, pin, verify)
	cmd.RunE = list.RunE
	return cmd
}

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}
