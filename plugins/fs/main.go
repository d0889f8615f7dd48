package main

import (
	"github.com/yagent/yagent/plugins/fs/fstool"
	"github.com/yagent/yagent/sdk"
)

func main() {
	s := fstool.New()
	sdk.Serve(sdk.Plugin{Name: "fs", Version: "0.1.0", Tools: s.Tools(), OnSessionEnd: s.EndSession})
}
