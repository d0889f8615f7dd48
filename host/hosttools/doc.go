// Package hosttools implements the host-native tools: load_tool (schemas of
// deferred tools), agent_exit (the model's way to finish; its arguments are
// echoed, never parsed) and ask_user_for_help (a question routed to the
// session's answerer).
//
// Each constructor returns the tool's spec, already bound by the static
// registry, and the executor the surface wraps in an adapter.
package hosttools
