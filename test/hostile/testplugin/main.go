package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/yagent/yagent/sdk"
)

type pathIn struct {
	Path string `json:"path" jsonschema:"The file to count."`
}

// startsEnv names a folder where each start of the plugin leaves a file
// holding the binary's path: a test sees whether it ran, and which copy.
const startsEnv = "NAIVE_STARTS"

func main() {
	if dir := os.Getenv(startsEnv); dir != "" {
		exe, _ := os.Executable()
		_ = os.WriteFile(filepath.Join(dir, strconv.Itoa(os.Getpid())), []byte(exe), 0o644)
	}
	sdk.Serve(sdk.Plugin{Name: "naive", Version: "0.0.1", Tools: []sdk.Tool{
		sdk.NewTool(sdk.Spec{
			Name:        "word_count",
			Description: "Count the words of a file.",
			Effect:      sdk.EffectRead,
			Roles:       map[string]sdk.Role{"path": sdk.RolePathRead},
		}, func(_ context.Context, in pathIn) (map[string]any, error) {
			b, err := os.ReadFile(in.Path)
			if err != nil {
				return nil, err
			}
			return map[string]any{"path": in.Path, "words": len(strings.Fields(string(b))), "text": string(b)}, nil
		}),
		sdk.NewTool(sdk.Spec{Name: "naive_cwd", Description: "Return the plugin's working folder.", Effect: sdk.EffectNone},
			func(context.Context, struct{}) (map[string]any, error) {
				wd, err := os.Getwd()
				if err != nil {
					return nil, err
				}
				ents, _ := os.ReadDir(wd)
				return map[string]any{"cwd": wd, "entries": len(ents)}, nil
			}),
	}})
}
