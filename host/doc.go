// Package host holds the yagent host, one package per concept: the static
// registry (toolspec), the call pipeline (adapter), the surface, the guard
// and the authorization loop (guard, authz), the plugin manager
// (pluginmgr), the dispatcher (bus), sessions, profiles (config), the
// host-native tools (hosttools), the MCP front (mcpserver) and their assembly
// (app). This package itself only carries the checks that span them.
package host
