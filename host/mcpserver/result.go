package mcpserver

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK encodes a tools/call result in three nested passes: each content
// item encodes itself, the result encodes itself around its items, and the
// JSON-RPC layer encodes the response around the result. encoding/json runs
// its compactor over what every inner MarshalJSON returned, and the stdio
// front's EncodeMessage over the response once more, so the text of a 4 KB
// read_file went through the compactor three times: at about 10 ns a byte,
// the largest part of the host's time in a call.
//
// encodeOnce hands the SDK a callResult instead: a plain struct, with no
// MarshalJSON of its own or of its parts, that encoding/json writes in one
// pass; and frontConn.Write puts the response around it as it is.

// callResult is a finished tools/call result in the form the SDK's
// CallToolResult takes on the wire.
type callResult struct {
	mcp.ResultBase
	Content           []any  `json:"content"`
	StructuredContent any    `json:"structuredContent,omitempty"`
	IsError           bool   `json:"isError,omitempty"`
	ResultType        string `json:"resultType,omitempty"`
}

// textContent and imageContent are the wire forms of the SDK's TextContent
// and ImageContent, whose fields are always present.
type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type imageContent struct {
	Type     string `json:"type"`
	MIMEType string `json:"mimeType"`
	Data     []byte `json:"data"`
}

// multiRoundTripVersion is the first protocol version whose clients get a
// resultType in every tools/call result, "complete" when the call is done.
// The SDK decides so, without exporting the rule; TestEncodeOnce_AsTheSDK
// holds this copy to it.
const multiRoundTripVersion = "2026-07-28"

// encodeOnce is a receiving middleware that hands the SDK the finished
// result of a tools/call as a callResult. A result it cannot render the
// same way (one that waits on input, or holds content other than text and
// images, or content with its own metadata) goes on as it is.
func encodeOnce(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		r, ok := res.(*mcp.CallToolResult)
		if err != nil || !ok || method != "tools/call" {
			return res, err
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if out, ok := asCallResult(r, ss); ok {
			return out, nil
		}
		return res, nil
	}
}

// asCallResult renders r as a callResult for a client of ss; false when
// r holds anything it cannot render as the SDK would.
func asCallResult(r *mcp.CallToolResult, ss *mcp.ServerSession) (*callResult, bool) {
	if r == nil || r.NeedsInput() || r.InputRequests != nil || r.RequestState != "" {
		return nil, false
	}
	out := &callResult{
		Content:           make([]any, 0, len(r.Content)),
		StructuredContent: r.StructuredContent,
		IsError:           r.IsError,
	}
	out.Meta = r.Meta
	for _, c := range r.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			if c.Meta != nil || c.Annotations != nil {
				return nil, false
			}
			out.Content = append(out.Content, textContent{Type: "text", Text: c.Text})
		case *mcp.ImageContent:
			if c.Meta != nil || c.Annotations != nil {
				return nil, false
			}
			data := c.Data
			if data == nil {
				data = []byte{}
			}
			out.Content = append(out.Content, imageContent{Type: "image", MIMEType: c.MIMEType, Data: data})
		default:
			return nil, false
		}
	}
	if version := protocolVersion(ss); version == "" || version >= multiRoundTripVersion {
		out.ResultType = "complete"
	}
	return out, true
}

// protocolVersion is the version the client of ss initialized with; ""
// when it did not (the SDK then takes its latest).
func protocolVersion(ss *mcp.ServerSession) string {
	if ss == nil {
		return ""
	}
	if p := ss.InitializeParams(); p != nil {
		return p.ProtocolVersion
	}
	return ""
}

// encodeResponse encodes r as one JSON-RPC message, with room for the line
// end, its result as it is: the SDK's encoder wrote it, so it is compact
// JSON already, and EncodeMessage would only scan it once more to compact
// it again. ok is false for a response it leaves to EncodeMessage (an
// error, no result).
func encodeResponse(r *jsonrpc.Response) (_ []byte, ok bool) {
	if r.Error != nil || len(r.Result) == 0 {
		return nil, false
	}
	b, ok := appendResponseHead(make([]byte, 0, len(r.Result)+responseRoom), r.ID)
	if !ok {
		return nil, false
	}
	b = append(b, r.Result...)
	return append(b, '}'), true
}

// responseRoom is what a response holds around its result, give or take
// a long string id: the head, the closing brace and a line end.
const responseRoom = 64

// appendResponseHead appends to b what the JSON-RPC response of id holds
// before its result; false, b as it was, for an id that is neither a
// number nor a string (the SDK makes no other).
func appendResponseHead(b []byte, id jsonrpc.ID) (_ []byte, ok bool) {
	const head, mid = `{"jsonrpc":"2.0","id":`, `,"result":`
	switch v := id.Raw().(type) {
	case int64:
		b = strconv.AppendInt(append(b, head...), v, 10)
	case string:
		q, err := json.Marshal(v)
		if err != nil {
			return b, false
		}
		b = append(append(b, head...), q...)
	default:
		return b, false
	}
	return append(b, mid...), true
}
