package tools

import (
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/yagent/yagent/sdk"
)

// validUTF8 wraps a tool so what it returns is valid UTF-8, as the wire
// (protobuf strings) and every MCP client require: file text with stray
// bytes gets U+FFFD in their place.
type validUTF8 struct{ sdk.Tool }

func (v validUTF8) Call(ctx context.Context, input json.RawMessage) (*sdk.Result, error) {
	res, err := v.Tool.Call(ctx, input)
	if te, ok := sdk.AsToolError(err); ok {
		te.Message = validString(te.Message)
	}
	if res != nil {
		res.Text = validString(res.Text)
		for i := range res.Notes {
			res.Notes[i].Detail = validString(res.Notes[i].Detail)
		}
	}
	return res, err
}

// validString is s with each invalid byte sequence replaced by U+FFFD; s
// itself, not a copy, when it is valid, as nearly every text is.
func validString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
