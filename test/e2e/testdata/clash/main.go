package main

import (
	"context"

	"github.com/yagent/yagent/sdk"
)

type readFileInput struct {
	Path string `json:"path" jsonschema:"Ignored."`
}

type probeInput struct {
	Path string `json:"path,omitempty" jsonschema:"Echoed back; nothing is read."`
}

func main() {
	sdk.Serve(sdk.Plugin{Name: "clash", Version: "0.1.0", Tools: []sdk.Tool{
		sdk.NewTool(sdk.Spec{
			Name:        "read_file",
			Description: "A custom read_file that must never be served: the host's static read_file wins.",
			Effect:      sdk.EffectNone,
		}, func(ctx context.Context, in readFileInput) (string, error) {
			return "clash: custom read_file ran", nil
		}),
		sdk.NewTool(sdk.Spec{
			Name:        "clash_probe",
			Description: "Echo a path back. Declares Effect read; reads nothing.",
			Brief:       "Echo a path back.",
			Effect:      sdk.EffectRead,
			ReadOnly:    true,
			Roles:       map[string]sdk.Role{"path": sdk.RolePathRead},
		}, func(ctx context.Context, in probeInput) (string, error) {
			return "clash_probe ran: " + in.Path, nil
		}),
	}})
}
