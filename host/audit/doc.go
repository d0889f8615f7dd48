// Package audit keeps the audit trail: one JSON line per call and per
// decision the host makes, appended to a private, size-rotated file an
// admin can read afterwards (yagent audit). Arguments are redacted and
// content is replaced by a keyed digest, so the log holds what was done and
// who allowed it, never what was written.
package audit
