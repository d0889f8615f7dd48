package tools

import (
	"context"
	_ "embed"

	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/sdk"
)

// SnapshotName is the name of the tool that reads the page.
const SnapshotName = "browser_snapshot"

//go:embed snapshot.md
var snapshotDescription string

// Snapshot returns browser_snapshot.
func Snapshot(m *session.Manager) sdk.Tool {
	return sdk.NewTool(spec(SnapshotName, "The page as a tree with element refs.", snapshotDescription, schemaFor[noInput](nil)),
		func(ctx context.Context, _ noInput) (*sdk.Result, error) {
			return m.Do(ctx, func(ctx context.Context, s *session.Session) (*sdk.Result, error) {
				return s.Snapshot(ctx)
			})
		})
}
