package sdk

import (
	"errors"
	"fmt"
)

// Error codes carried by the result envelope. A tool returns them through a
// *ToolError; the host adds its own (needs_auth, plugin_crashed, ...).
const (
	CodeInvalidInput     = "invalid_input"
	CodeNeedsAuth        = "needs_auth"
	CodeDenied           = "denied"
	CodeNotFound         = "not_found"
	CodeSearchNotFound   = "search_not_found"
	CodeSearchNotUnique  = "search_not_unique"
	CodeWriteConflict    = "write_conflict"
	CodeTimeout          = "timeout"
	CodeCancelled        = "cancelled"
	CodePluginCrashed    = "plugin_crashed"
	CodePluginFailed     = "plugin_unavailable"
	CodeUnknownTool      = "unknown_tool"
	CodeToolFailed       = "tool_failed"
	CodeResultUnencoding = "result_not_serializable"
	// CodeAuditUnavailable: the host must record the call's decision
	// before it runs (audit: required) and could not.
	CodeAuditUnavailable = "audit_unavailable"
)

// ToolError is a failure the model should read: bad input, a missing file, a
// conflict. Code is one of the Code constants or a tool's own stable word.
type ToolError struct {
	Code    string
	Message string
	// Data is optional structured detail (JSON-serializable).
	Data any
}

func (e *ToolError) Error() string {
	if e.Code == "" {
		return e.Message
	}
	return e.Code + ": " + e.Message
}

// Errorf returns a *ToolError with the given code and formatted message.
func Errorf(code, format string, args ...any) *ToolError {
	return &ToolError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsToolError returns err as a *ToolError if it is or wraps one.
func AsToolError(err error) (*ToolError, bool) {
	var te *ToolError
	if errors.As(err, &te) {
		return te, true
	}
	return nil, false
}
