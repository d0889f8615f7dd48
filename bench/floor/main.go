package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The window of one read, as yagent's read_file has it.
const (
	maxLines = 2000
	maxBytes = 256 << 10
	maxFile  = 64 << 20
)

var schema = json.RawMessage(`{"type":"object","properties":{` +
	`"path":{"type":"string","description":"The file to read: relative to the root, or absolute inside it."},` +
	`"offset":{"type":"integer","description":"1-based line to start at. Default 1."},` +
	`"limit":{"type":"integer","description":"How many lines to read. Default and maximum 2000."}},` +
	`"required":["path"],"additionalProperties":false}`)

type input struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

// data is the structured part of an answer, the fields of yagent's.
type data struct {
	Path       string `json:"path"`
	FirstLine  int    `json:"first_line,omitempty"`
	LastLine   int    `json:"last_line,omitempty"`
	TotalLines int    `json:"total_lines"`
	NextOffset int    `json:"next_offset,omitempty"`
	Size       int64  `json:"size"`
}

func main() {
	rootDir := flag.String("root", "", "the folder read_file reads from (default: the first argument, else the current folder)")
	flag.Parse()
	if *rootDir == "" {
		*rootDir = flag.Arg(0)
	}
	if *rootDir == "" {
		*rootDir = "."
	}
	abs, err := filepath.Abs(*rootDir)
	if err != nil {
		log.Fatalf("floor: %v", err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		log.Fatalf("floor: %v: pass an existing folder with -root", err)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "0"}, nil)
	s.AddTool(&mcp.Tool{
		Name:        "read_file",
		Description: "Reads a text file and returns a window of its lines, exactly as they are on disk.",
		InputSchema: schema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return readFile(root, abs, req.Params.Arguments), nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatalf("floor: %v", err)
	}
}

func readFile(root *os.Root, abs string, args json.RawMessage) *mcp.CallToolResult {
	var in input
	if err := json.Unmarshal(args, &in); err != nil || in.Path == "" || in.Offset < 0 || in.Limit < 0 {
		return failed("invalid input: pass path (a string), and offset and limit as positive integers")
	}
	rel := in.Path
	if filepath.IsAbs(rel) {
		r, err := filepath.Rel(abs, rel)
		if err != nil {
			return failed(err.Error())
		}
		rel = r
		in.Path = filepath.ToSlash(r) // shown relative, as yagent shows it
	}
	f, err := root.Open(rel) // os.Root refuses a path that leaves the root
	if err != nil {
		return failed(err.Error())
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxFile {
		return failed(in.Path + " is not a regular file of at most 64 MiB")
	}
	b := make([]byte, fi.Size())
	if _, err := f.ReadAt(b, 0); err != nil && fi.Size() > 0 {
		return failed(err.Error())
	}

	offset, limit := max(in.Offset, 1), maxLines
	if in.Limit > 0 && in.Limit < maxLines {
		limit = in.Limit
	}
	d := data{Path: in.Path, Size: fi.Size(), TotalLines: bytes.Count(b, []byte("\n"))}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		d.TotalLines++
	}
	// Skip to the offset, then take whole lines within both limits.
	start := 0
	for line := 1; line < offset && start < len(b); line++ {
		i := bytes.IndexByte(b[start:], '\n')
		if i < 0 {
			start = len(b)
			break
		}
		start += i + 1
	}
	end, shown := start, 0
	for shown < limit && end < len(b) {
		i := bytes.IndexByte(b[end:], '\n')
		next := len(b)
		if i >= 0 {
			next = end + i + 1
		}
		if next-start > maxBytes && shown > 0 {
			break
		}
		end, shown = next, shown+1
	}
	text := string(b[start:end])
	if shown > 0 {
		d.FirstLine, d.LastLine = offset, offset+shown-1
		if d.LastLine < d.TotalLines {
			d.NextOffset = d.LastLine + 1
			text += fmt.Sprintf("[read_file: showed lines %d-%d of %d; call read_file with offset=%d to continue]", d.FirstLine, d.LastLine, d.TotalLines, d.NextOffset)
		}
	} else {
		text = fmt.Sprintf("[read_file: %s has no line %d]", in.Path, offset)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: map[string]any{"data": d},
	}
}

func failed(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}
