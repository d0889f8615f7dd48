package main

import (
	"fmt"
	"os"

	"github.com/yagent/yagent/plugins/shell/runner"
	"github.com/yagent/yagent/plugins/shell/tools"
	"github.com/yagent/yagent/sdk"
)

func main() {
	opts, err := tools.Options(sdk.Settings())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	m := runner.New(opts)
	sdk.Serve(sdk.Plugin{Name: "shell", Version: tools.Version, Tools: tools.All(m), OnShutdown: m.Shutdown, OnSessionEnd: m.EndSession})
}
