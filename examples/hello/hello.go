package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/yagent/yagent/sdk"
)

type helloInput struct {
	Name string `json:"name" jsonschema:"Who to greet."`
}

type helloOutput struct {
	Greeting string `json:"greeting"`
}

// helloTool greets someone by name. It touches nothing, so it declares
// Effect none; the host trusts that only once the plugin is pinned.
func helloTool() sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        "hello",
		Description: "Greet someone by name. Returns the greeting.",
		Brief:       "Greet someone by name.",
		Effect:      sdk.EffectNone,
		ReadOnly:    true,
	}, func(ctx context.Context, in helloInput) (*sdk.Result, error) {
		name := strings.TrimSpace(in.Name)
		if name == "" {
			return nil, sdk.Errorf(sdk.CodeInvalidInput, "name is empty; say who to greet")
		}
		out := helloOutput{Greeting: fmt.Sprintf("Hello, %s!", name)}
		return &sdk.Result{Text: out.Greeting, Data: out}, nil
	})
}
