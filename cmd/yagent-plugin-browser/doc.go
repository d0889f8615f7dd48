// Command yagent-plugin-browser is yagent's browser plugin: the fourteen
// browser_* tools over headless Chromium, served to the host over
// go-plugin. Each agent session gets its own Chromium, started with an
// argv built in Go (plugins/browser/chrome) and driven over one CDP
// connection (plugins/browser/session); the tools themselves live in
// plugins/browser/tools, the snapshot outline in plugins/browser/axtree.
package main
