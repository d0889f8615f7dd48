// Package atomicfile writes files that readers see whole or not at all:
// yagent's own state (caches, the lock file, settings) that a crash or a
// concurrent start must never find half-written.
package atomicfile
