package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callOverStdio serves one tool that returns res, behind StdioTransport,
// to a client that initializes with version, and returns the line the
// server wrote in answer to a call of it; once encodes results with
// encodeOnce.
func callOverStdio(t *testing.T, version string, once bool, res *mcp.CallToolResult) []byte {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c := *res // the SDK marks the result it is handed
			return &c, nil
		})
	if once {
		srv.AddReceivingMiddleware(encodeOnce)
	}
	_, inW, outR := runOnPipes(t, srv)
	go func() {
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`+"\n", version)
		io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		io.WriteString(inW, `{"jsonrpc":"2.0","id":"call-<2>","method":"tools/call","params":{"name":"t","arguments":{}}}`+"\n")
	}()
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct{ ID any }
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID == "call-<2>" {
			return append([]byte(nil), sc.Bytes()...)
		}
	}
	t.Fatalf("no answer to the call (%v)", sc.Err())
	return nil
}

// TestEncodeOnce_AsTheSDK: a result encoded in one pass reaches the client
// as the SDK's own encoding of it does, for clients of the protocol
// versions before and after results got a resultType.
func TestEncodeOnce_AsTheSDK(t *testing.T) {
	t.Parallel()
	results := map[string]*mcp.CallToolResult{
		"text":       {Content: []mcp.Content{&mcp.TextContent{Text: "a <b> & \"c\"\n\t\u2028 é \x00 \xff\xfe end"}}},
		"empty text": {Content: []mcp.Content{&mcp.TextContent{}}},
		"no content": {},
		"images": {Content: []mcp.Content{
			&mcp.TextContent{Text: "shot"},
			&mcp.ImageContent{Data: []byte{0, 1, 2, 250}, MIMEType: "image/png"},
			&mcp.ImageContent{MIMEType: "image/jpeg"},
		}},
		"structured": {
			Content: []mcp.Content{&mcp.TextContent{Text: "x"}},
			StructuredContent: map[string]any{
				"code": "not_found", "truncated": true, "repairs": []string{"r"},
				"data": json.RawMessage(`{"id":12345678901234567890, "b":1.50,"a":[2e3]}`),
			},
			IsError: true,
		},
		"meta": {Meta: mcp.Meta{"k": "v"}, Content: []mcp.Content{&mcp.TextContent{Text: "x"}}},
		// Passed on as it is: content with annotations.
		"annotated": {Content: []mcp.Content{&mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{Priority: 0.5}}}},
	}
	for _, version := range []string{"2025-06-18", multiRoundTripVersion} {
		for name, res := range results {
			t.Run(version+"/"+name, func(t *testing.T) {
				t.Parallel()
				var sdk, once any
				if err := json.Unmarshal(callOverStdio(t, version, false, res), &sdk); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(callOverStdio(t, version, true, res), &once); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(sdk, once) {
					t.Errorf("encoded once:\n%s\nthe SDK's:\n%s", mustJSON(once), mustJSON(sdk))
				}
			})
		}
	}
}

// TestEncodeOnce_OnlyFinishedCalls: a finished call's result is handed on
// as a callResult; a result that waits on input, one holding content it
// cannot render, and every other method's result go on as they are.
func TestEncodeOnce_OnlyFinishedCalls(t *testing.T) {
	t.Parallel()
	text := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}}
	waits := &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{}, RequestState: "s"}
	link := &mcp.CallToolResult{Content: []mcp.Content{&mcp.ResourceLink{URI: "file:///x", Name: "x"}}}
	list := &mcp.ListToolsResult{}
	for _, c := range []struct {
		method string
		res    mcp.Result
		once   bool
	}{
		{"tools/call", text, true},
		{"tools/call", waits, false},
		{"tools/call", link, false},
		{"tools/list", list, false},
	} {
		h := encodeOnce(func(context.Context, string, mcp.Request) (mcp.Result, error) { return c.res, nil })
		got, err := h(context.Background(), c.method, &mcp.CallToolRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if _, isOnce := got.(*callResult); isOnce != c.once {
			t.Errorf("%s %T: handed on as %T", c.method, c.res, got)
		}
		if !c.once && got != c.res {
			t.Errorf("%s %T: not handed on as it was", c.method, c.res)
		}
	}
	failed := errors.New("failed")
	h := encodeOnce(func(context.Context, string, mcp.Request) (mcp.Result, error) { return nil, failed })
	if _, err := h(context.Background(), "tools/call", &mcp.CallToolRequest{}); err != failed {
		t.Errorf("the error became %v", err)
	}
}

// TestEncodeResponse_AsEncodeMessage: a response written around its result
// as it is reads as the SDK's encoding of it; an error is left to the SDK.
func TestEncodeResponse_AsEncodeMessage(t *testing.T) {
	t.Parallel()
	result := json.RawMessage(`{"content":[{"type":"text","text":"a <b>\n"}],"isError":true}`)
	for _, id := range []any{float64(0), float64(9007199254740993), "a-1", `"<quoted>\"\u2028`} {
		rid, err := jsonrpc.MakeID(id)
		if err != nil {
			t.Fatal(err)
		}
		r := &jsonrpc.Response{ID: rid, Result: result}
		got, ok := encodeResponse(r)
		if !ok {
			t.Fatalf("id %v: left to EncodeMessage", id)
		}
		want, err := jsonrpc.EncodeMessage(r)
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("id %v: %s: %v", id, got, err)
		}
		_ = json.Unmarshal(want, &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("id %v:\n got %s\nwant %s", id, got, want)
		}
	}
	one, _ := jsonrpc.MakeID(float64(1))
	for _, r := range []*jsonrpc.Response{
		{ID: one, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad"}},
		{ID: one, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "bad"}, Result: result},
		{ID: one},
	} {
		if b, ok := encodeResponse(r); ok {
			t.Errorf("%+v: encoded as %s", r, b)
		}
	}
}

// BenchmarkCallResultEncoding encodes the response to a 4 KB read_file as
// the SDK does (each content item, the result and the response encoded
// around one another, the stdio front's EncodeMessage over the whole) and
// as the front does (one encoding pass, the response written around it:
// reflect through encoding/json, once by hand as the lane does).
func BenchmarkCallResultEncoding(b *testing.B) {
	text := strings.Repeat(strings.Repeat("x", 59)+"\tab\n", 64)
	res := &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: map[string]any{"data": json.RawMessage(`{"path":"f.txt","size":4096,"first_line":1,"last_line":64,"total_lines":64}`)},
	}
	id, _ := jsonrpc.MakeID(float64(7))
	// marshal is how the SDK's JSON-RPC layer encodes a result.
	marshal := func(v any) json.RawMessage {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			b.Fatal(err)
		}
		return bytes.TrimRight(buf.Bytes(), "\n")
	}
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: marshal(res)}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// reflect: the callResult through encoding/json, the response put
	// around a copy of it.
	b.Run("reflect", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, ok := asCallResult(res, nil)
			if !ok {
				b.Fatal("not rendered")
			}
			if _, ok := encodeResponse(&jsonrpc.Response{ID: id, Result: marshal(out)}); !ok {
				b.Fatal("not encoded")
			}
		}
	})
	// once: the lane's, the callResult written by hand into the buffer
	// the response is written from.
	b.Run("once", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r := encodeReply(id, laneResult(res, nil))
			if r.msg == nil {
				b.Fatal("not encoded")
			}
			r.release()
		}
	})
}
