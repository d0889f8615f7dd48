// Package bus is the host's in-process event bus: tool started, progress and
// finished events for the fronts (MCP progress notifications, CLI output),
// log records of the plugins (MCP notifications/message), and the user_help_needed / user_help_response events of the
// authorization loop.
//
// Ordinary events are dropped, and counted, when a subscriber's queue is
// full: a slow log must never stall a tool. The two user-help events ride a
// critical side queue per subscriber instead: FIFO, and when it is full the
// oldest event is dropped, never the newest.
//
// A tap (Tap) sees every event in the publisher's goroutine, before Publish
// returns: how a front passes a call's progress on before the call's result,
// and in order, without a queue that could drop or reorder it.
package bus
