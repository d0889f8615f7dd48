package tools

import (
	"context"
	_ "embed"

	"github.com/yagent/yagent/sdk"
)

const todoReadName = "todo_read"

//go:embed todo_read.md
var todoReadDescription string

type todoReadInput struct{}

// todoReadTool returns the session's todo list.
func todoReadTool(st *store) sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        todoReadName,
		Description: todoReadDescription,
		Brief:       "Read the todo list.",
		Effect:      sdk.EffectNone,
		ReadOnly:    true,
	}, func(ctx context.Context, _ todoReadInput) (*sdk.Result, error) {
		s, loadErr := st.read(sdk.CallFrom(ctx).SessionID)
		text := renderTodos(s.Todos)
		if len(s.Todos) == 0 {
			text += " Use todo_write to record tasks."
		}
		res := &sdk.Result{Text: text, Data: map[string]any{"todos": nonNil(s.Todos)}}
		return withStateNote(res, noteNotLoaded, loadErr), nil
	})
}
