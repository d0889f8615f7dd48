package main

import (
	"github.com/yagent/yagent/plugins/fs/tools"
	"github.com/yagent/yagent/sdk"
)

func main() {
	s := tools.New()
	// One processor: a call is a few system calls and a little CPU, and
	// the plugin's parallelism is its concurrent calls, each mostly
	// waiting on the disk.
	sdk.Serve(sdk.Plugin{Name: "fs", Version: "0.1.0", Tools: s.Tools(), OnSessionEnd: s.EndSession, MaxProcs: 1})
}
