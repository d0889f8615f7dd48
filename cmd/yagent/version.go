package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/yagent/yagent/internal/remote"
)

// commit and commitModified ("true" for a tree with changes) are set by a
// build that stamps the commit itself, with -ldflags "-X main.commit=...":
// scripts/dist.sh does, building with -buildvcs=false so that a release's
// bytes do not depend on how the source was checked out (go stamps nothing
// from a linked git worktree). The build info's VCS settings win where go
// stamped them.
var commit, commitModified string

// versionText says what this yagent is: its version (the one -ldflags set,
// else the module's from the build info: a tag for `go install …@vX`,
// "(devel)" from a checkout), the commit it was built from and whether the
// tree had changes, the Go that built it, and the plugin protocol versions
// the host speaks.
func versionText() string {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(version, commit, commitModified == "true", bi)
}

// versionOf is versionText for the version, commit and changes -ldflags
// set and the build info bi (nil when there is none).
func versionOf(v, commit string, modified bool, bi *debug.BuildInfo) string {
	if bi != nil {
		if v == "dev" && bi.Main.Version != "" {
			v = bi.Main.Version
		}
		var revision, changed string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				changed = s.Value
			}
		}
		if revision != "" {
			commit, modified = revision, changed == "true"
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "yagent %s\n", v)
	switch {
	case commit == "":
		b.WriteString("commit: unknown (built without version control information)\n")
	case modified:
		fmt.Fprintf(&b, "commit: %s, with uncommitted changes\n", commit)
	default:
		fmt.Fprintf(&b, "commit: %s\n", commit)
	}
	fmt.Fprintf(&b, "go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&b, "plugin protocols: %d, and %d for plugins built before it\n", remote.ProtocolVersions[0], remote.ProtocolVersions[1])
	return b.String()
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the commit, the Go and the plugin protocols this yagent was built with",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), versionText())
			return err
		},
	}
}
