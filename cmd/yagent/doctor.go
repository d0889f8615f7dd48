package main

import (
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/yagent/yagent/host/app"
	"github.com/yagent/yagent/host/config"
	"github.com/yagent/yagent/host/pluginmgr"
	"github.com/yagent/yagent/plugins/browser/chrome"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// probeLayers reports the kernel layers and the cgroup v2 folder; a seam
// the CLI tests replace to play a machine with or without them.
var probeLayers = app.ProbeSandbox

// probeBounds reports how commands get the bounds of their tree here; a
// seam like probeLayers.
var probeBounds = app.ProbeBounds

func newDoctorCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Say which sandbox layers are active here and what the tools use; exit 1 when sandbox: required cannot be met",
		Long: `Say which kernel layers of the sandbox are active on this machine (Landlock,
seccomp user notification, cgroup v2, mount and network namespaces, the
capability drop), each missing one with what to do; the sandbox mode the
profile resolves to; whether each session's commands get a /tmp of their
own; the bounds of each command (sandbox.pids and sandbox.memory_mb, each
active through a cgroup v2 controller or a cgroup v1 hierarchy, or missing
and why; sandbox.tmp_size_mb, set by the session temp folder); and the
programs the tools use (bash, ripgrep, Universal Ctags, Chromium) and the
plugins found, pinned or not.

Exit 0 unless the profile says sandbox: required and a layer it needs is
missing: commands would be refused, so doctor exits 1 and says so.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			ld, err := app.LoadProfile(g.appOptions(cmd.ErrOrStderr()))
			if err != nil {
				return err
			}
			prof := ld.Profile
			l, root, cgErr := probeLayers()
			layers := app.SandboxLayers(l, root, cgErr, prof.SandboxNetwork())
			mode := prof.SandboxMode()
			fmt.Fprintf(out, "sandbox: %s (from %s), network %s\n", mode, app.SandboxOrigin(ld), prof.Sandbox.Network)
			for _, ly := range layers {
				switch {
				case ly.Active:
					fmt.Fprintf(out, "  active   %s\n", ly.Name)
				case !ly.Needed:
					fmt.Fprintf(out, "  missing  %s: %s (not needed while sandbox.network is on)\n", ly.Name, ly.Why)
				default:
					fmt.Fprintf(out, "  missing  %s: %s; without it %s\n", ly.Name, ly.Why, ly.Means)
				}
			}
			fmt.Fprintln(out, "bounds of each command:")
			for _, b := range app.SandboxBounds(prof.Sandbox, probeBounds(l)) {
				fmt.Fprintf(out, "  %-8s %s (%s): %s\n", b.Status, b.What, b.Key, b.How)
			}
			fmt.Fprintf(out, "sockets: %s\n", app.SocketLine(l, prof.Sandbox.UnixSockets))
			if mode == policy.SandboxOff {
				fmt.Fprintln(out, "  (sandbox off: commands run with the guard's check only; the layers, bounds and socket rules above are not applied)")
			}
			fmt.Fprintf(out, "temp folders: %s\n", app.TempStatusOf(g.appOptions(cmd.ErrOrStderr()), prof, l))
			fmt.Fprintln(out, "tools:")
			doctorTools(out, prof)
			doctorPlugins(cmd, g, out)
			if missing := app.SandboxMissing(layers); mode == policy.SandboxRequired && len(missing) > 0 {
				var names []string
				for _, m := range missing {
					names = append(names, m.Name)
				}
				return &exitError{code: 1, err: fmt.Errorf("sandbox: required, but %s missing here, so every command would be refused; "+
					"fix what is listed above, or set sandbox: on (run with what there is) in ~/.yagent/config.yaml where the managed layer allows it",
					strings.Join(names, ", ")+map[bool]string{true: " is", false: " are"}[len(names) == 1])}
			}
			return nil
		},
	}
}

// doctorTools says which programs the tools find, as the plugins look
// them up.
func doctorTools(out io.Writer, prof *config.Profile) {
	search := prof.Plugins["search"]
	if p, err := exec.LookPath("bash"); err == nil {
		fmt.Fprintf(out, "  found    bash %s\n", p)
	} else {
		fmt.Fprintln(out, "  missing  bash: run_bash and the shell tasks cannot start; install bash")
	}
	switch p, note := lookSetting(search["rg_path"], "rg"); {
	case p != "":
		fmt.Fprintf(out, "  found    ripgrep %s%s\n", p, note)
	default:
		fmt.Fprintf(out, "  missing  ripgrep%s: search falls back to its Go walker (slower on big trees); install ripgrep or set plugins.search.rg_path\n", note)
	}
	switch p, note := lookSetting(search["ctags_path"], "ctags"); {
	case p == "":
		fmt.Fprintf(out, "  missing  universal-ctags%s: code_outline and find_symbol read Go and Python only; install universal-ctags or set plugins.search.ctags_path\n", note)
	case !universalCtags(p):
		fmt.Fprintf(out, "  missing  universal-ctags: %s is another ctags; code_outline and find_symbol read Go and Python only; install universal-ctags\n", p)
	default:
		fmt.Fprintf(out, "  found    universal-ctags %s%s\n", p, note)
	}
	if p, err := chrome.Find(prof.Plugins["browser"][chrome.SettingChromium]); err == nil {
		fmt.Fprintf(out, "  found    chromium %s\n", p)
	} else {
		fmt.Fprintf(out, "  missing  chromium: the browser tools cannot start: %v\n", err)
	}
}

// lookSetting finds a program as the search plugin does (sdk.LookProgram)
// and says how it was found.
func lookSetting(setting, name string) (path, note string) {
	ps := sdk.LookProgram(setting, name, nil)
	switch {
	case ps.Off:
		note = " (turned off by the profile)"
	case ps.Set:
		note = " (set by the profile)"
	case ps.Bad != "":
		note = fmt.Sprintf(" (the profile's %q is not an executable)", ps.Bad)
	}
	return ps.Path, note
}

func universalCtags(p string) bool {
	out, err := exec.Command(p, "--version").Output()
	return err == nil && strings.Contains(string(out), "Universal Ctags")
}

// doctorPlugins lists the plugins found in the plugin folders and whether
// each is pinned and matches its pin.
func doctorPlugins(cmd *cobra.Command, g *globals, out io.Writer) {
	a, err := app.Open(cmd.Context(), g.appOptions(io.Discard))
	if err != nil {
		fmt.Fprintf(out, "plugins: none could be loaded: %v\n", err)
		return
	}
	defer a.Close(cmd.Context())
	fmt.Fprintf(out, "plugins (lock %s):\n", a.LockFile)
	if len(a.All) == 0 {
		fmt.Fprintln(out, "  none found; build them (make build) or pass --plugin-dir")
		return
	}
	lock, err := pluginmgr.ReadLock(a.LockFile)
	if err != nil {
		fmt.Fprintf(out, "  the lock file cannot be read: %v\n", pluginmgr.WithUserFix(err))
	}
	status := map[string]pluginmgr.PinStatus{}
	if err == nil {
		for _, v := range lock.Verify(a.All, policy.SumFile) {
			status[v.Name] = v.Status
		}
	}
	for _, p := range a.All {
		var s string
		switch {
		case p.Refused != nil:
			s = fmt.Sprintf("REFUSED: %v", p.Refused)
		case p.Off != "":
			s = "off: " + p.Off
		case p.Dev:
			s = "DEV OVERRIDE: used without a pin check, as unpinned"
		case status[p.Name] == pluginmgr.PinOK:
			s = "pinned, matches its pin"
		case status[p.Name] == pluginmgr.PinMismatch:
			s = fmt.Sprintf("pinned, DOES NOT match its pin (yagent plugins pin %s after checking it)", p.Name)
		case p.Pinned:
			s = "pinned"
		default:
			s = fmt.Sprintf("unpinned (yagent plugins pin %s)", p.Name)
		}
		fmt.Fprintf(out, "  %-10s %s  %s\n", p.Name, p.Path, s)
	}
}
