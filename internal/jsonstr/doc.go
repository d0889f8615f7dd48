// Package jsonstr quotes strings as JSON, byte for byte as encoding/json
// does with HTML escaping off, eight plain bytes at a time: the text of a
// tool's result on the MCP fronts and the fields of an audit record, where
// encoding/json's byte-at-a-time escaping was the larger part of the cost.
package jsonstr
