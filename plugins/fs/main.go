package main

import (
	"github.com/yagent/yagent/plugins/fs/tools"
	"github.com/yagent/yagent/sdk"
)

func main() {
	s := tools.New()
	sdk.Serve(sdk.Plugin{Name: "fs", Version: "0.1.0", Tools: s.Tools(), OnSessionEnd: s.EndSession})
}
