package tools

import (
	"strings"
	"testing"

	"github.com/yagent/yagent/sdk"
)

func TestUpdatePlan(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input string
		want  string // exact text, or the error message fragment
		code  string
	}{
		{"renders the plan",
			`{"explanation":"tests first","plan":[{"step":"read the parser","status":"completed"},{"step":"write a failing test","status":"in_progress"},{"step":"fix it","status":"pending"}]}`,
			"Plan updated (1 of 3 completed): tests first\n1. [x] read the parser\n2. [>] write a failing test\n3. [ ] fix it", ""},
		{"no step in progress", `{"plan":[{"step":"a","status":"pending"}]}`,
			"Plan updated (0 of 1 completed)\n1. [ ] a", ""},
		{"clears", `{"plan":[]}`, "Plan cleared.", ""},
		{"two in progress", `{"plan":[{"step":"a","status":"in_progress"},{"step":"b","status":"in_progress"}]}`,
			`2 steps are in_progress: 1 ("a"), 2 ("b"); keep at most one step in_progress`, sdk.CodeInvalidInput},
		{"bad status", `{"plan":[{"step":"a","status":"done"}]}`,
			`plan[0].status is "done"; use pending, in_progress or completed`, sdk.CodeInvalidInput},
		{"empty step", `{"plan":[{"step":" ","status":"pending"}]}`, "plan[0].step is empty", sdk.CodeInvalidInput},
		{"missing plan", `{"explanation":"x"}`, "plan is missing", sdk.CodeInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := newStore("")
			res, err := call(t, updatePlanTool(st), "s", tt.input)
			if tt.code != "" {
				if te := toolErr(t, err, tt.code); !strings.Contains(te.Message, tt.want) {
					t.Fatalf("message %q, want it to contain %q", te.Message, tt.want)
				}
				if s, _ := st.read("s"); s.Plan != nil {
					t.Fatalf("a refused plan was recorded: %+v", s.Plan)
				}
				return
			}
			if err != nil || res.Text != tt.want {
				t.Fatalf("update_plan(%s) = %v, %v\nwant %q", tt.input, res, err, tt.want)
			}
		})
	}
}

func TestUpdatePlan_ReplacesPerSession(t *testing.T) {
	t.Parallel()
	st := newStore("")
	tool := updatePlanTool(st)
	mustCall(t, tool, "a", `{"plan":[{"step":"one","status":"pending"},{"step":"two","status":"pending"}]}`)
	mustCall(t, tool, "a", `{"plan":[{"step":"three","status":"in_progress"}]}`)
	mustCall(t, tool, "b", `{"plan":[{"step":"other","status":"completed"}]}`)
	a, _ := st.read("a")
	b, _ := st.read("b")
	if len(a.Plan) != 1 || a.Plan[0].Step != "three" || len(b.Plan) != 1 || b.Plan[0].Step != "other" {
		t.Fatalf("plans a=%+v b=%+v, want each session's last plan", a.Plan, b.Plan)
	}
}
