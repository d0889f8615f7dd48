package main

import (
	"fmt"
	goversion "go/version"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"

	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/host/pluginmgr"
	"github.com/yagent/yagent/internal/scaffold"
)

func newPluginsInitCmd() *cobra.Command {
	var modPath, checkout string
	cmd := &cobra.Command{
		Use:   "init NAME [DIR]",
		Short: "Write a new plugin module into DIR (default ./yagent-plugin-NAME): one tool, its test, a Makefile that installs it",
		Long: `Write a new plugin module into DIR (default ./yagent-plugin-NAME), which must
be new or empty: go.mod, main.go (one sdk.Serve call), one tool in a file of
its own with its test on sdk/plugintest, a Makefile (make build, make test,
make install: the binary yagent-plugin-NAME into ~/.yagent/plugins, a folder
yagent searches), a README and a .gitignore.

NAME is the plugin's name as the host reads it from the binary's: lowercase
letters, digits, - and _.

Inside a checkout of yagent (DIR's folder or the working folder is in one),
or with --yagent PATH, the module also gets a go.work that uses the checkout:
it builds against that tree, offline. Elsewhere go.mod requires the version of
yagent this binary is, and go mod tidy fetches it.`,
		Example: `  yagent plugins init weather
  cd yagent-plugin-weather && make test && make install && yagent plugins pin weather`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := checkPluginName(name); err != nil {
				return err
			}
			dir := scaffold.BinaryPrefix + name
			if len(args) == 2 {
				dir = args[1]
			}
			if modPath != "" {
				if err := module.CheckImportPath(modPath); err != nil {
					return fmt.Errorf("--module %q is not a module path: %w", modPath, err)
				}
			}
			o := scaffold.Options{Name: name, Module: modPath}
			var err error
			if o.Checkout, o.GoVersion, err = findCheckout(checkout, dir); err != nil {
				return err
			}
			if o.Checkout == "" {
				o.GoVersion = goLine(runtime.Version())
				if bi, ok := debug.ReadBuildInfo(); ok {
					o.Require = requiredYagent(bi.Main.Path, bi.Main.Version)
				}
			}
			files, err := scaffold.Write(dir, o)
			if err != nil {
				return err
			}
			return reportInit(cmd, dir, o, files)
		},
	}
	cmd.Flags().StringVar(&modPath, "module", "", "the new module's path (default example.com/yagent-plugin-NAME)")
	cmd.Flags().StringVar(&checkout, "yagent", "", "build against the yagent checkout at this folder, with a go.work (default: the checkout DIR or the working folder is in, if any)")
	return cmd
}

// maxToolName is the longest tool name the scaffold gives its plugin: the
// function-calling APIs models are served through take names of 64
// characters at most, and a client passes the tool's name on as it is.
const maxToolName = 64

// checkPluginName refuses a name the host would not load a plugin by, one
// whose scaffolded tool name no client would take, or one of yagent's own
// families.
func checkPluginName(name string) error {
	if !pluginmgr.ValidName(name) {
		return fmt.Errorf("%q is not a plugin name: use lowercase letters, digits, - and _ (the host runs a binary yagent-plugin-NAME only for such a NAME)", name)
	}
	if n := len(scaffold.ToolName(name)); n > maxToolName {
		return fmt.Errorf("%q is too long a plugin name: its tool would be %s, %d characters, and many clients refuse a tool name over %d; keep the name to %d characters", name, scaffold.ToolName(name), n, maxToolName, maxToolName-len(scaffold.ToolName("")))
	}
	if slices.Contains(toolspec.Families(), name) {
		return fmt.Errorf("%q is the name of one of yagent's own plugins (%s): choose another", name, strings.Join(toolspec.Families(), ", "))
	}
	return nil
}

// findCheckout returns the yagent checkout the new module in dir builds
// against, and its go version: flag's when it is set (which must be one),
// else the checkout dir's folder is in, else the one the working folder is
// in; "" when there is none.
func findCheckout(flag, dir string) (root, goVersion string, err error) {
	if flag != "" {
		root, err := filepath.Abs(flag)
		if err != nil {
			return "", "", err
		}
		goVersion, err := scaffold.Checkout(root)
		if err != nil {
			return "", "", fmt.Errorf("--yagent: %w", err)
		}
		return root, goVersion, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	if root, goVersion := scaffold.FindCheckout(filepath.Dir(abs)); root != "" {
		return root, goVersion, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", "", nil
	}
	root, goVersion = scaffold.FindCheckout(wd)
	return root, goVersion, nil
}

// requiredYagent is the yagent version a module written outside a checkout
// requires: this binary's own, read from its build info, when it is a
// version go.mod can require; "" for a build from a development tree
// ("(devel)", or a pseudo-version with +dirty).
func requiredYagent(path, v string) string {
	if path != scaffold.Module || !semver.IsValid(v) || semver.Build(v) != "" {
		return ""
	}
	return v
}

// goLine is the go line of a module written outside a checkout: the Go
// this binary was built with (goVersion, runtime.Version's), which built
// yagent and so is at least the one yagent needs. A development toolchain
// names no release: then the go line is 1.26, which go mod tidy raises to
// what the sdk needs.
func goLine(goVersion string) string {
	if goversion.IsValid(goVersion) {
		return strings.TrimPrefix(goVersion, "go")
	}
	return "1.26"
}

// reportInit says what init wrote and what to run next.
func reportInit(cmd *cobra.Command, dir string, o scaffold.Options, files []string) error {
	out := cmd.OutOrStdout()
	mod := o.Module
	if mod == "" {
		mod = scaffold.DefaultModule(o.Name)
	}
	fmt.Fprintf(out, "wrote %s, module %s:\n", shellQuote(dir), mod)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, f := range files {
		note := ""
		switch f {
		case "go.mod":
			switch {
			case o.Checkout != "":
				note = "no yagent version: go.work gives the sdk"
			case o.Require != "":
				note = "requires " + scaffold.Module + " " + o.Require + ", this yagent's version"
			default:
				note = "requires no yagent version: this yagent was built from a development tree"
			}
		case "go.work":
			note = "builds against the yagent checkout at " + o.Checkout + ", offline"
		case "main.go":
			note = "sdk.Serve of plugin " + o.Name
		case "count_words.go":
			note = "the tool " + scaffold.ToolName(o.Name)
		case "count_words_test.go":
			note = "its test on sdk/plugintest"
		case "Makefile":
			note = "make build, make test, make install (into ~/.yagent/plugins)"
		case "README.md":
			note = "how to test, install, pin and grow it"
		case ".gitignore":
			note = "the binary make build writes"
			if o.Checkout != "" {
				note += ", go.work"
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\n", f, note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	steps := []string{"cd " + shellQuote(dir)}
	if o.Checkout == "" {
		steps = append(steps, "go mod tidy")
		fmt.Fprintln(out, "\ngo mod tidy fetches the sdk and writes go.sum; see README.md for choosing its version.")
	}
	steps = append(steps, "make test", "make install", "yagent plugins pin "+o.Name)
	fmt.Fprintf(out, "\nnext:\n  %s\n", strings.Join(steps, " && "))
	fmt.Fprintf(out, "then pin it again after each make install: the host refuses a pinned plugin whose binary changed.\n")
	return nil
}

// shellQuote is s as a shell word.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+=:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
