package main

import (
	"github.com/yagent/yagent/plugins/cognitive/tools"
	"github.com/yagent/yagent/sdk"
)

func main() {
	sdk.Serve(tools.Plugin())
}
