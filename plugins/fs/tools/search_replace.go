package tools

import (
	"context"
	_ "embed"

	"github.com/yagent/yagent/plugins/fs/internal/edit"
	"github.com/yagent/yagent/sdk"
)

//go:embed search_replace_in_file.md
var searchReplaceDoc string

type searchReplaceInput struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
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
