package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The floor answers as yagent's read_file does: the lines as they are on
// disk, a window with the offset to go on, the same data fields, and
// nothing from outside its root.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\nthree\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	tests := []struct {
		name, args, text string
		data             data
		isError          bool
	}{
		{name: "whole file", args: `{"path":"a.txt"}`, text: "one\ntwo\nthree\n",
			data: data{Path: "a.txt", FirstLine: 1, LastLine: 3, TotalLines: 3, Size: 14}},
		{name: "absolute path shown relative", args: `{"path":"` + filepath.Join(dir, "a.txt") + `","offset":3}`, text: "three\n",
			data: data{Path: "a.txt", FirstLine: 3, LastLine: 3, TotalLines: 3, Size: 14}},
		{name: "window", args: `{"path":"a.txt","offset":2,"limit":1}`,
			text: "two\n[read_file: showed lines 2-2 of 3; call read_file with offset=3 to continue]",
			data: data{Path: "a.txt", FirstLine: 2, LastLine: 2, TotalLines: 3, NextOffset: 3, Size: 14}},
		{name: "outside the root", args: `{"path":"../a.txt"}`, isError: true},
		{name: "no path", args: `{}`, isError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := readFile(root, dir, json.RawMessage(tt.args))
			text := res.Content[0].(*mcp.TextContent).Text
			if res.IsError != tt.isError {
				t.Fatalf("isError = %v (%q), want %v", res.IsError, text, tt.isError)
			}
			if tt.isError {
				return
			}
			if text != tt.text {
				t.Errorf("text = %q, want %q", text, tt.text)
			}
			if got := res.StructuredContent.(map[string]any)["data"]; got != tt.data {
				t.Errorf("data = %+v, want %+v", got, tt.data)
			}
		})
	}
}
