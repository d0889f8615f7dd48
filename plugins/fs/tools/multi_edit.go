package tools

import (
	"context"
	_ "embed"

	"github.com/yagent/yagent/plugins/fs/internal/edit"
	"github.com/yagent/yagent/sdk"
)

//go:embed multi_edit.md
var multiEditDoc string

type multiEditStep struct {
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

type multiEditInput struct {
	Path  string          `json:"path"`
	Edits []multiEditStep `json:"edits"`
}

func (s *Service) multiEditTool() sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        "multi_edit",
		Description: multiEditDoc,
		Brief:       "Apply several replacements to one file, all or nothing.",
		Effect:      sdk.EffectWrite,
		Roles:       map[string]sdk.Role{"path": sdk.RolePathWrite},
	}, s.multiEdit)
}

func (s *Service) multiEdit(ctx context.Context, in multiEditInput) (*sdk.Result, error) {
	reqs := make([]edit.Request, len(in.Edits))
	for i, e := range in.Edits {
		reqs[i] = edit.Request{Old: e.OldString, New: e.NewString, ReplaceAll: e.ReplaceAll}
	}
	if err := edit.ValidateAll(reqs); err != nil {
		return nil, err
	}
	return s.editFile(ctx, "multi_edit", in.Path, func(text string) (edit.Outcome, []int, error) {
		return edit.ApplyAll(text, reqs)
	})
}
