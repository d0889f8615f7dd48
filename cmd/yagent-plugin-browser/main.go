package main

import (
	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/plugins/browser/tools"
	"github.com/yagent/yagent/sdk"
)

func main() {
	m := session.NewManager(session.OptionsFrom(sdk.Settings()))
	sdk.Serve(sdk.Plugin{Name: "browser", Version: tools.Version, Tools: tools.All(m), OnShutdown: m.Shutdown, OnSessionEnd: m.EndSession})
}
