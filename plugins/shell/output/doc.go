// Package output keeps what a shell command writes within a byte budget and
// turns it into text a model can read: a Buffer that retains the head and
// the tail of a stream while accepting (and counting) every byte, and
// Sanitize, which makes arbitrary bytes valid UTF-8 with control bytes
// escaped and terminal escape sequences removed.
package output
