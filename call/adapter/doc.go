// Package adapter turns one tool into a pipeline the host can call: parse,
// fall back on unusable input, repair, validate against the schema, check
// the workspace boundary, authorize, execute, wrap the result in the
// envelope.
package adapter
