package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/plugintest"
)

func TestHello(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, input, want, code string
	}{
		{"greets", `{"name":"Ada"}`, "Hello, Ada!", ""},
		{"trims", `{"name":"  Grace "}`, "Hello, Grace!", ""},
		{"empty name", `{"name":""}`, "", sdk.CodeInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := helloTool().Call(context.Background(), json.RawMessage(tt.input))
			if tt.code != "" {
				if te, ok := sdk.AsToolError(err); !ok || te.Code != tt.code {
					t.Fatalf("hello(%s): got %v, want a %s error", tt.input, err, tt.code)
				}
				return
			}
			if err != nil || res.Text != tt.want || res.Data.(helloOutput).Greeting != tt.want {
				t.Fatalf("hello(%s) = %+v, %v; want %q", tt.input, res, err, tt.want)
			}
		})
	}
}

func TestHello_Spec(t *testing.T) {
	t.Parallel()
	s := helloTool().Spec()
	if s.Name != "hello" || s.Effect != sdk.EffectNone || len(s.Roles) != 0 {
		t.Fatalf("spec = %+v, want hello with Effect none and no roles", s)
	}
}

// The plugin as the host sees it: over gRPC, through Describe and Call.
func TestHello_Served(t *testing.T) {
	t.Parallel()
	c := plugintest.Start(t, sdk.Plugin{Name: "hello", Version: "0.1.0", Tools: []sdk.Tool{helloTool()}}, nil)
	res, err := c.Call(context.Background(), "hello", sdk.CallInfo{SessionID: "s"}, map[string]string{"name": "Ada"})
	if err != nil || res.Text != "Hello, Ada!" {
		t.Fatalf("hello over gRPC = %+v, %v", res, err)
	}
	// Effect none: the host's guard lets it run without asking, once pinned.
	if ds := c.Host.Decisions(); len(ds) != 1 || ds[0].Action != "allow" {
		t.Fatalf("the guard's decisions = %+v, want one allow", ds)
	}
	unpinned := plugintest.Start(t, sdk.Plugin{Name: "hello", Version: "0.1.0", Tools: []sdk.Tool{helloTool()}}, &plugintest.Options{Unpinned: true})
	if _, err := unpinned.Call(context.Background(), "hello", sdk.CallInfo{}, map[string]string{"name": "Ada"}); err == nil {
		t.Fatal("hello unpinned ran without asking; the host asks for every tool of an unpinned plugin")
	}
}
