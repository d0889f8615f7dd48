// Package profiles holds yagent's built-in profiles (coder, readonly, browser,
// full) as embedded YAML files, and the JSON Schema every profile file obeys.
//
// host/config loads them; this package only serves the bytes.
package profiles
