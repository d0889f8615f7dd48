// Package edit finds where a model's old_string sits in a file's text and
// replaces it, trying ever more tolerant matches (exact; one uniform-CRLF
// fallback; whitespace-relaxed whole lines; JSON-escaped text unwrapped;
// Unicode punctuation normalized), each relaxed level accepted only on a
// unique match and always replacing the file's real bytes. When nothing
// matches it says where the closest region is and how it differs.
package edit
