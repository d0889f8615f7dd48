package adapter

import "github.com/yagent/yagent/host/internal/suggest"

// Suggest returns up to three names of known close to name (edit distance,
// or one containing the other), closest first: the "did you mean" of an
// unknown tool or field.
func Suggest(name string, known []string) []string { return suggest.Close(name, known) }
