package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/yagent/yagent/sdk"
)

const updatePlanName = "update_plan"

//go:embed update_plan.md
var updatePlanDescription string

type planStep struct {
	Step   string `json:"step"`
	Status string `json:"status"`
}

type updatePlanInput struct {
	Explanation string     `json:"explanation,omitempty"`
	Plan        []planStep `json:"plan"`
}

// updatePlanTool records the session's plan.
func updatePlanTool(st *store) sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        updatePlanName,
		Description: updatePlanDescription,
		Brief:       "Record the plan and each step's status.",
		Effect:      sdk.EffectNone,
		InputSchema: schemaWithEnums[updatePlanInput](map[string][]any{"plan.status": statuses}),
	}, func(ctx context.Context, in updatePlanInput) (*sdk.Result, error) {
		if in.Plan == nil {
			return nil, sdk.Errorf(sdk.CodeInvalidInput, "plan is missing; send every step as {\"step\": ..., \"status\": \"pending\"|\"in_progress\"|\"completed\"}, or an empty list to clear the plan")
		}
		plan := make([]planStep, len(in.Plan))
		var active []string
		for i, s := range in.Plan {
			s.Step = strings.TrimSpace(s.Step)
			if s.Step == "" {
				return nil, sdk.Errorf(sdk.CodeInvalidInput, "plan[%d].step is empty; say what the step does", i)
			}
			if !validStatus(s.Status) {
				return nil, sdk.Errorf(sdk.CodeInvalidInput, "plan[%d].status is %q; use pending, in_progress or completed", i, s.Status)
			}
			if s.Status == statusInProgress {
				active = append(active, fmt.Sprintf("%d (%q)", i+1, s.Step))
			}
			plan[i] = s
		}
		if len(active) > 1 {
			return nil, sdk.Errorf(sdk.CodeInvalidInput,
				"%d steps are in_progress: %s; keep at most one step in_progress: mark finished steps completed and the others pending",
				len(active), strings.Join(active, ", "))
		}
		explanation := strings.TrimSpace(in.Explanation)
		next, saveErr, err := st.update(sdk.CallFrom(ctx).SessionID, func(s *sessionState) error {
			s.Plan, s.Explanation = plan, explanation
			return nil
		})
		if err != nil {
			return nil, err
		}
		res := &sdk.Result{
			Text: renderPlan(next.Explanation, next.Plan),
			Data: map[string]any{"explanation": next.Explanation, "plan": next.Plan},
		}
		return withStateNote(res, noteNotSaved, saveErr), nil
	})
}

func validStatus(s string) bool {
	return s == statusPending || s == statusInProgress || s == statusCompleted
}

// statusMark is the checkbox of a status.
func statusMark(status string) string {
	switch status {
	case statusCompleted:
		return "[x]"
	case statusInProgress:
		return "[>]"
	}
	return "[ ]"
}

func renderPlan(explanation string, plan []planStep) string {
	if len(plan) == 0 {
		return "Plan cleared."
	}
	done := 0
	for _, s := range plan {
		if s.Status == statusCompleted {
			done++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Plan updated (%d of %d completed)", done, len(plan))
	if explanation != "" {
		fmt.Fprintf(&b, ": %s", explanation)
	}
	b.WriteString("\n")
	for i, s := range plan {
		fmt.Fprintf(&b, "%d. %s %s\n", i+1, statusMark(s.Status), s.Step)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
