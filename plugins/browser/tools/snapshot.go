package tools

import (
	"context"
	_ "embed"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/sdk"
)

// SnapshotName is the name of the tool that reads the page.
const SnapshotName = "browser_snapshot"

//go:embed snapshot.md
var snapshotDescription string

type snapshotInput struct {
	Offset int    `json:"offset,omitempty" jsonschema:"First line to show, 1-based (a cut answer names the next offset)."`
	Limit  int    `json:"limit,omitempty" jsonschema:"Most lines to show; default: as many as the answer holds."`
	Ref    string `json:"ref,omitempty" jsonschema:"Only this element's subtree, by its ref (e12)."`
	Query  string `json:"query,omitempty" jsonschema:"Only lines whose role or name contains this text (any case), with their ancestors."`
}

// Snapshot returns browser_snapshot.
func Snapshot(m *session.Manager) sdk.Tool {
	schema := schemaFor[snapshotInput](func(s *jsonschema.Schema) {
		one := 1.0
		s.Properties["offset"].Minimum, s.Properties["limit"].Minimum = &one, &one
	})
	return sdk.NewTool(spec(SnapshotName, "The page as a tree with element refs.", snapshotDescription, schema),
		func(ctx context.Context, in snapshotInput) (*sdk.Result, error) {
			return m.Do(ctx, func(ctx context.Context, s *session.Session) (*sdk.Result, error) {
				return s.Snapshot(ctx, session.View{Offset: in.Offset, Limit: in.Limit, Ref: in.Ref, Query: in.Query})
			})
		})
}
