package tools

import (
	"testing"

	"github.com/yagent/yagent/sdk"
)

func TestThink(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, input, want, code string
	}{
		{"acknowledges", `{"thought":"the parser drops the last token"}`, "Thought noted.", ""},
		{"empty thought", `{"thought":"  "}`, "", sdk.CodeInvalidInput},
		{"no input", `{}`, "", sdk.CodeInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := call(t, thinkTool(), "s", tt.input)
			if tt.code != "" {
				toolErr(t, err, tt.code)
				return
			}
			if err != nil || res.Text != tt.want || res.Data != nil {
				t.Fatalf("think(%s) = %+v, %v; want text %q and no data", tt.input, res, err, tt.want)
			}
		})
	}
}
