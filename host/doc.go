// Package host holds the yagent host process, one package per concept: the
// authorization loop (authz), the plugin manager (pluginmgr), profiles
// (config), the surface, the host-native tools (hosttools), the audit trail,
// telemetry, the MCP front (mcpserver) and their assembly (app). What judges
// and runs one call (the registry, sessions, the event bus, the pipeline and
// the guard) lives under call/, which the plugin test harness imports too
// (docs/ARCHITECTURE.md#layers). This package itself only carries the checks
// that span them.
package host
