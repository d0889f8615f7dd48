// Package walk lists the files under a search root in parallel, the way
// ripgrep does: ignore files respected (package ignore), hidden names
// skipped, symbolic links reported but never followed (so a link loop
// cannot hang a walk and no link leads a search outside the root), and
// special files skipped.
package walk
