// Package udiff renders the unified diff of an edit, so a model can see
// exactly what a relaxed match changed.
package udiff
