// Package suggest finds the names close to a misspelt one: the "did you
// mean" of an unknown tool, parameter or configuration key.
package suggest
