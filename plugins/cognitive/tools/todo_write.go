package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/yagent/yagent/sdk"
)

const todoWriteName = "todo_write"

//go:embed todo_write.md
var todoWriteDescription string

type todo struct {
	ID       string `json:"id"`
	Content  string `json:"content"`
	Status   string `json:"status"`
	Priority string `json:"priority,omitempty"`
}

type todoWriteInput struct {
	Todos []todo `json:"todos"`
}

// Todo priorities.
var priorities = []any{"high", "medium", "low"}

// todoWriteTool replaces the session's todo list.
func todoWriteTool(st *store) sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        todoWriteName,
		Description: todoWriteDescription,
		Brief:       "Write the todo list.",
		Effect:      sdk.EffectNone,
		InputSchema: schemaWithEnums[todoWriteInput](map[string][]any{
			"todos.status":   statuses,
			"todos.priority": priorities,
		}),
	}, func(ctx context.Context, in todoWriteInput) (*sdk.Result, error) {
		if in.Todos == nil {
			return nil, sdk.Errorf(sdk.CodeInvalidInput, "todos is missing; send the whole list as [{\"id\", \"content\", \"status\"}], or an empty list to clear it")
		}
		todos := make([]todo, len(in.Todos))
		seen := map[string]int{}
		for i, t := range in.Todos {
			t.ID, t.Content = strings.TrimSpace(t.ID), strings.TrimSpace(t.Content)
			switch {
			case t.ID == "":
				return nil, sdk.Errorf(sdk.CodeInvalidInput, "todos[%d].id is empty; give every item a unique id", i)
			case t.Content == "":
				return nil, sdk.Errorf(sdk.CodeInvalidInput, "todos[%d].content is empty; say what is to be done", i)
			case !validStatus(t.Status):
				return nil, sdk.Errorf(sdk.CodeInvalidInput, "todos[%d].status is %q; use pending, in_progress or completed", i, t.Status)
			case t.Priority != "" && t.Priority != "high" && t.Priority != "medium" && t.Priority != "low":
				return nil, sdk.Errorf(sdk.CodeInvalidInput, "todos[%d].priority is %q; use high, medium or low, or leave it out", i, t.Priority)
			}
			if j, dup := seen[t.ID]; dup {
				return nil, sdk.Errorf(sdk.CodeInvalidInput, "todos[%d] and todos[%d] share the id %q; ids must be unique", j, i, t.ID)
			}
			seen[t.ID] = i
			todos[i] = t
		}
		next, saveErr, err := st.update(sdk.CallFrom(ctx).SessionID, func(s *sessionState) error {
			s.Todos = todos
			return nil
		})
		if err != nil {
			return nil, err
		}
		res := &sdk.Result{
			Text: "Todo list updated. " + renderTodos(next.Todos),
			Data: map[string]any{"todos": nonNil(next.Todos)},
		}
		return withStateNote(res, noteNotSaved, saveErr), nil
	})
}

// renderTodos shows the list with a count by status.
func renderTodos(todos []todo) string {
	if len(todos) == 0 {
		return "The todo list is empty."
	}
	count := map[string]int{}
	for _, t := range todos {
		count[t.Status]++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d items: %d completed, %d in progress, %d pending.\n",
		len(todos), count[statusCompleted], count[statusInProgress], count[statusPending])
	for _, t := range todos {
		fmt.Fprintf(&b, "%s %s: %s", statusMark(t.Status), t.ID, t.Content)
		if t.Priority != "" {
			fmt.Fprintf(&b, " (%s)", t.Priority)
		}
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// nonNil makes an empty list encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
