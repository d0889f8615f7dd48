package fstool

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/yagent/yagent/sdk"
)

// validUTF8 wraps a tool so what it returns is valid UTF-8, as the wire
// (protobuf strings) and every MCP client require: file text with stray
// bytes gets U+FFFD in their place.
type validUTF8 struct{ sdk.Tool }

func (v validUTF8) Call(ctx context.Context, input json.RawMessage) (*sdk.Result, error) {
	res, err := v.Tool.Call(ctx, input)
	if te, ok := sdk.AsToolError(err); ok {
		te.Message = strings.ToValidUTF8(te.Message, "\uFFFD")
	}
	if res != nil {
		res.Text = strings.ToValidUTF8(res.Text, "\uFFFD")
		for i := range res.Notes {
			res.Notes[i].Detail = strings.ToValidUTF8(res.Notes[i].Detail, "\uFFFD")
		}
	}
	return res, err
}
