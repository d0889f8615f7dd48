package main

import (
	"fmt"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/yagent/yagent/host/app"
	"github.com/yagent/yagent/host/pluginmgr"
	"github.com/yagent/yagent/policy"
)

func newPluginsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugins [list|pin|unpin|verify|init]",
		Short: "List plugins, pin and unpin their checksums, verify them against the lock file, write a new one",
		Args:  cobra.NoArgs,
	}
	var listOut, verifyOut string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the plugins found, in search order",
		Args:  cobra.NoArgs,
		RunE: withApp(g, &listOut, func(cmd *cobra.Command, a *app.App, _ []string) error {
			if listOut == outputJSON {
				type entry struct {
					Name    string `json:"name"`
					Version string `json:"version"`
					// Protocol is the plugin protocol it speaks; 0 when
					// it was not launched (refused, off).
					Protocol int    `json:"protocol,omitempty"`
					Tools    int    `json:"tools"`
					Pinned   bool   `json:"pinned"`
					Built    bool   `json:"built,omitempty"`
					Refused  string `json:"refused,omitempty"`
					Off      string `json:"off,omitempty"`
					Dev      bool   `json:"dev,omitempty"`
					SHA256   string `json:"sha256"`
					Path     string `json:"path"`
				}
				out := []entry{}
				for _, p := range a.All {
					e := entry{Name: p.Name, Version: p.Version, Protocol: p.Protocol, Tools: len(p.Specs), Pinned: p.Pinned, Built: p.Built, Off: p.Off, Dev: p.Dev, SHA256: p.SHA256, Path: p.Path}
					if p.Refused != nil {
						e.Refused = p.Refused.Error()
					}
					out = append(out, e)
				}
				return writeJSON(cmd.OutOrStdout(), out)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tVERSION\tTOOLS\tPINNED\tSHA256\tPATH")
			for _, p := range a.All {
				pinned := "no"
				switch {
				case p.Refused != nil:
					pinned = "REFUSED"
				case p.Off != "":
					pinned = "off"
				case p.Dev:
					pinned = "DEV"
				case p.Pinned:
					pinned = "yes"
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", p.Name, p.Version, len(p.Specs), pinned, short(p.SHA256), p.Path)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			// Why each refused plugin is refused, below the table: the
			// reasons are sentences, too long for a column.
			for _, p := range a.All {
				if p.Refused != nil {
					fmt.Fprintf(cmd.OutOrStdout(), "\n%v\n", p.Refused)
				}
			}
			return nil
		}),
	}
	var reset bool
	pin := &cobra.Command{
		Use:   "pin [NAME...]",
		Short: "Record the sha256 of the named plugins (all when none is named) in the lock file",
		Long: `Record the sha256 of the named plugins (all when none is named) in the lock file;
the lock's other entries are kept. --reset starts a new lock file holding only
these pins, keeping the old one beside it as <lock>.bad: the way to repair a lock
file that cannot be read.

A pin is how a plugin in a folder commands can write (the workspace, /tmp) is
trusted: such a binary is refused unless it is pinned or is the one yagent was
built with. The binary is hashed, never launched. Pinning them all (no NAME)
skips the refused ones a command could have written: name each to pin it.`,
		ValidArgsFunction: completePlugins(g),
		RunE: withApp(g, nil, func(cmd *cobra.Command, a *app.App, names []string) error {
			chosen, err := choosePlugins(a.All, names)
			if err != nil {
				return err
			}
			// Pinning every plugin found vouches for none a command may
			// have put there: those are pinned by name alone.
			var skipped []*pluginmgr.Plugin
			if len(names) == 0 {
				chosen = slices.DeleteFunc(slices.Clone(chosen), func(p *pluginmgr.Plugin) bool {
					if p.Refused != nil && p.Writable != "" {
						skipped = append(skipped, p)
						return true
					}
					return false
				})
			}
			write := pluginmgr.WriteLock
			if reset {
				write = pluginmgr.ResetLock
			}
			if err := write(a.LockFile, chosen); err != nil {
				return err
			}
			for _, p := range chosen {
				if p.Dev {
					fmt.Fprintf(cmd.OutOrStdout(), "skipped %s: from the dev override folder\n", p.Name)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "pinned %s %s\n", p.Name, p.SHA256)
			}
			for _, p := range skipped {
				fmt.Fprintf(cmd.OutOrStdout(), "skipped %s: %s is in a folder commands can write (%s) and refused; if you put it there, pin it by name (yagent plugins pin %s)\n",
					p.Name, p.Path, p.Writable, p.Name)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "lock file:", a.LockFile)
			return nil
		}),
	}
	pin.Flags().BoolVar(&reset, "reset", false, "replace the lock file instead of adding to it (the old one is kept as <lock>.bad)")
	unpin := &cobra.Command{
		Use:               "unpin NAME...",
		Short:             "Remove the named plugins from the lock file",
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completePlugins(g),
		// The lock file alone is edited: a pin whose binary is gone can be
		// removed too.
		RunE: withApp(g, nil, func(cmd *cobra.Command, a *app.App, names []string) error {
			if err := pluginmgr.Unpin(a.LockFile, names); err != nil {
				return err
			}
			for _, n := range names {
				fmt.Fprintf(cmd.OutOrStdout(), "unpinned %s\n", n)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "lock file:", a.LockFile)
			return nil
		}),
	}
	verify := &cobra.Command{
		Use:   "verify",
		Short: "Hash every plugin binary again and compare it with the lock file; exit 1 when a pinned one is missing or differs",
		Args:  cobra.NoArgs,
		RunE: withApp(g, &verifyOut, func(cmd *cobra.Command, a *app.App, _ []string) error {
			lock, err := pluginmgr.ReadLock(a.LockFile)
			if err != nil {
				return pluginmgr.WithUserFix(err)
			}
			out := cmd.OutOrStdout()
			bad := 0
			verdicts := lock.Verify(a.All, policy.SumFile)
			for _, v := range verdicts {
				if v.Bad() {
					bad++
				}
			}
			if verifyOut == outputJSON {
				type entry struct {
					Name     string `json:"name"`
					Path     string `json:"path"`
					Status   string `json:"status"`
					Expected string `json:"expected,omitempty"`
					Actual   string `json:"actual,omitempty"`
				}
				list := []entry{}
				for _, v := range verdicts {
					list = append(list, entry{Name: v.Name, Path: v.Path, Status: string(v.Status), Expected: v.Expected, Actual: v.Actual})
				}
				if err := writeJSON(out, list); err != nil {
					return err
				}
			}
			for _, v := range verdicts {
				if verifyOut == outputJSON {
					break
				}
				switch v.Status {
				case pluginmgr.PinOK:
					fmt.Fprintf(out, "ok        %s %s\n", v.Name, short(v.Actual))
				case pluginmgr.PinNone:
					fmt.Fprintf(out, "unpinned  %s %s\n", v.Name, short(v.Actual))
				case pluginmgr.PinMismatch:
					fmt.Fprintf(out, "MISMATCH  %s: %s has sha256 %s, the lock pins %s; refused until it is pinned again (yagent plugins pin %s)\n",
						v.Name, v.Path, v.Actual, v.Expected, v.Name)
				case pluginmgr.PinUntrusted:
					fmt.Fprintf(out, "untrusted %s %s: refused, %s is in a folder commands can write and is not pinned; if you put it there, trust it (yagent plugins pin %s)\n",
						v.Name, short(v.Actual), v.Path, v.Name)
				case pluginmgr.PinDev:
					fmt.Fprintf(out, "dev       %s %s: from the dev override folder, not checked\n", v.Name, short(v.Actual))
				case pluginmgr.PinMissing:
					fmt.Fprintf(out, "MISSING   %s: pinned (sha256 %s, was %s) but no plugin folder holds a readable binary; restore it, or remove the pin (yagent plugins unpin %s)\n",
						v.Name, short(v.Expected), v.Path, v.Name)
				default:
					fmt.Fprintf(out, "UNKNOWN   %s: the sum of %s cannot be computed\n", v.Name, v.Path)
				}
			}
			if bad > 0 {
				return fmt.Errorf("%d pinned plugin(s) do not match %s", bad, a.LockFile)
			}
			return nil
		}),
	}
	outputFlag(list, &listOut)
	outputFlag(verify, &verifyOut)
	cmd.AddCommand(list, pin, unpin, verify, newPluginsInitCmd())
	cmd.RunE = list.RunE
	return cmd
}

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}

// choosePlugins returns the plugins named (every one when names is empty),
// in the order of all; a name no plugin has is an error.
func choosePlugins(all []*pluginmgr.Plugin, names []string) ([]*pluginmgr.Plugin, error) {
	if len(names) == 0 {
		return all, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var chosen []*pluginmgr.Plugin
	for _, p := range all {
		if want[p.Name] && p.Dev {
			return nil, fmt.Errorf("plugin %s comes from the dev override folder (%s) and is not pinned from there; remove the override to pin the installed binary", p.Name, p.Path)
		}
		if want[p.Name] {
			chosen = append(chosen, p)
			delete(want, p.Name)
		}
	}
	for _, n := range names {
		if want[n] {
			return nil, fmt.Errorf("no plugin named %q found; `yagent plugins list` shows what is found", n)
		}
	}
	return chosen, nil
}
