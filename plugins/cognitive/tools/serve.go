package tools

import (
	"os"

	"github.com/yagent/yagent/sdk"
)

// Plugin is the cognitive plugin as its settings and environment configure
// it: the value yagent-plugin-cognitive hands to sdk.Serve.
func Plugin() sdk.Plugin {
	return newPlugin(optionsFrom(sdk.Settings(), os.LookupEnv))
}
