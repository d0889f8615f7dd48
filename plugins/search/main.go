package main

import (
	"github.com/yagent/yagent/plugins/search/tools"
	"github.com/yagent/yagent/sdk"
)

func main() {
	sdk.Serve(sdk.Plugin{
		Name:    "search",
		Version: tools.Version,
		Tools:   tools.All(tools.FromSettings(sdk.Settings())),
	})
}
