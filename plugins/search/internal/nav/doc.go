// Package nav answers code-navigation questions: the definitions in a
// file (Outline), where a name is defined (FindSymbol), where it is used
// and, for Go functions, who calls it (FindReferences), and what a Go
// function calls (Callees).
//
// Go sources are read with go/parser always, because it is exact (kinds,
// receivers, signatures, end lines) and because an answer about Go code
// should not change with whether ctags happens to be installed. Other
// languages go through Universal Ctags when it is available
// (ctags --output-format=json --fields=+nKSe); without it, Python has a
// small indentation-based reader and the rest is reported as unsupported.
// References are word-boundary matches (package grep) minus definition
// lines; in Go packages that type-check (golang.org/x/tools/go/packages),
// they are resolved with go/types instead: only identifiers bound to an
// object of that name count, grouped by object, and calls are attributed
// to the enclosing function. The type checker loads nothing outside the
// Finder's roots: a module that lies outside them, or whose go.mod
// replaces a module with an outside folder, is skipped and named, and it
// never downloads modules or toolchains. The type checker runs go list,
// and go list runs cgo and the C compiler on what a package says: when the
// call has a sandbox, the search plugin's binary starts again as the Go
// loader (LoaderArg, ServeLoader) inside it and type-checks there, so they
// read only what a command of the call could.
package nav
