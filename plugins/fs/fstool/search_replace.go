package fstool

import (
	"context"
	_ "embed"

	"github.com/yagent/yagent/plugins/fs/internal/edit"
	"github.com/yagent/yagent/sdk"
)

//go:embed search_replace_in_file.md
var searchReplaceDoc string

type searchReplaceInput struct {
	Path       string `json:"path" jsonschema:"The file to edit: relative to the workspace, or absolute."`
	OldString  string `json:"old_string" jsonschema:"The exact text to replace, copied from the file with a few lines of context so it matches one place."`
	NewString  string `json:"new_string" jsonschema:"The text to put in its place."`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"Replace every occurrence of old_string (exact matches only). Default false: old_string must match exactly one place."`
}

func (s *Service) searchReplaceTool() sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        "search_replace_in_file",
		Description: searchReplaceDoc,
		Brief:       "Replace one exact block of text in a file.",
		Effect:      sdk.EffectWrite,
		Roles:       map[string]sdk.Role{"path": sdk.RolePathWrite},
	}, s.searchReplace)
}

func (s *Service) searchReplace(ctx context.Context, in searchReplaceInput) (*sdk.Result, error) {
	req := edit.Request{Old: in.OldString, New: in.NewString, ReplaceAll: in.ReplaceAll}
	if err := edit.Validate(req); err != nil {
		return nil, err
	}
	return s.editFile(ctx, "search_replace_in_file", in.Path, func(text string) (edit.Outcome, []int, error) {
		out, err := edit.Apply(text, req)
		return out, []int{out.Line}, err
	})
}
