package config

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnknownProfile is wrapped by errors for a profile name that no built-in,
// user or project profile has.
var ErrUnknownProfile = errors.New("unknown profile")

// KeyError is a problem with one key of one layer: an unknown key, a value
// of the wrong type, or a value out of range. Load reports every KeyError of
// a layer at once, joined with errors.Join.
type KeyError struct {
	// Source names the layer: a file path (home shown as ~), "env
	// YAGENT_DEFERRED", or "flags".
	Source string
	// Key is the dotted key, with list indexes: "exec.rules[0].action".
	Key string
	// Unknown is set when the key itself is not a profile key.
	Unknown bool
	// Suggestion is the known key closest to an unknown one, if any.
	Suggestion string
	// Valid lists the keys allowed where an unknown key was found, when
	// none is close enough to suggest.
	Valid []string
	// Problem says what is wrong with the value.
	Problem string
}

func (e *KeyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", e.Source)
	switch {
	case e.Unknown && e.Suggestion != "":
		fmt.Fprintf(&b, "unknown key %q (did you mean %q?)", e.Key, e.Suggestion)
	case e.Unknown:
		fmt.Fprintf(&b, "unknown key %q (valid keys: %s)", e.Key, strings.Join(e.Valid, ", "))
	default:
		fmt.Fprintf(&b, "key %q: %s", e.Key, e.Problem)
	}
	return b.String()
}
