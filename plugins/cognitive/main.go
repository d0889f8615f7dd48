package main

import (
	"os"

	"github.com/yagent/yagent/sdk"
)

func main() {
	sdk.Serve(newPlugin(optionsFrom(sdk.Settings(), os.LookupEnv)))
}
