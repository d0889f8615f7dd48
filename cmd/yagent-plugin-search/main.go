package main

import (
	"os"

	"github.com/yagent/yagent/plugins/search/tools"
	"github.com/yagent/yagent/sdk"
)

func main() {
	// Started again by itself as the Go loader, inside a call's sandbox:
	// answer on stdout and exit, before anything of a plugin starts.
	if len(os.Args) > 1 && os.Args[1] == tools.LoaderArg {
		os.Exit(tools.ServeLoader(os.Stdin, os.Stdout, os.Stderr))
	}
	sdk.Serve(sdk.Plugin{
		Name:    "search",
		Version: tools.Version,
		Tools:   tools.All(tools.FromSettings(sdk.Settings())),
	})
}
