// Package ignore decides which paths a search skips: the rules of
// .gitignore, .ignore and .rgignore files and of .git/info/exclude, read the
// way ripgrep reads them, plus hidden (dot) names.
//
// Rules follow gitignore(5): blank lines and #comments are skipped, a
// leading ! re-includes, a trailing / matches directories only, a pattern
// with a slash before its end is anchored to its file's directory and one
// without matches a name at any depth, * and ? stop at /, ** spans
// directories, [...] is a class and \ escapes. As in ripgrep, {a,b}
// alternatives are accepted too.
//
// As in git and ripgrep, .gitignore files and .git/info/exclude apply only
// inside a git repository (a folder holding .git, and below it), and not
// above the repository's root: a stray .gitignore in a parent folder of
// the repository, such as the home folder, is not read. .ignore and
// .rgignore files apply anywhere.
//
// Precedence is ripgrep's: within one file the last matching line wins;
// among directories the deepest file with a matching line wins; among kinds
// .rgignore beats .ignore, which beats .gitignore, which beats
// .git/info/exclude. A path that no rule matches is skipped when its name
// starts with a dot. Rules are not applied to the search root itself, and a
// file inside an excluded directory is never reached because the walk does
// not enter that directory.
//
// The matcher is written here rather than taken from go-git's
// plumbing/format/gitignore: that package reads through go-billy and
// brings the whole go-git module into the build, and it knows neither
// .ignore and .rgignore files nor ripgrep's precedence between kinds of
// file, which both grep back-ends must share exactly.
package ignore
