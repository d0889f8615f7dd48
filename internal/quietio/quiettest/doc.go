// Package quiettest counts the thread switches a call costs after idle
// spells, for the tests of the system calls yagent makes raw so that they
// leave the runtime's monitor thread asleep (internal/quietio,
// internal/localstat, the fs plugin's reads).
package quiettest
