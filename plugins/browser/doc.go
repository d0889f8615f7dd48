// Command yagent-plugin-browser is yagent's browser plugin: the fourteen
// browser_* tools over headless Chromium, served to the host over
// go-plugin. Each agent session gets its own Chromium, started with an
// argv built in Go (package chrome) and driven over one CDP connection
// (package session); the tools themselves live in package tools, the
// snapshot outline in package axtree.
package main
