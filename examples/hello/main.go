package main

import "github.com/yagent/yagent/sdk"

func main() {
	sdk.Serve(sdk.Plugin{Name: "hello", Version: "0.1.0", Tools: []sdk.Tool{helloTool(), linesTool()}})
}
