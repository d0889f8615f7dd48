// Package grep searches file contents line by line with a regular
// expression, through ripgrep when a binary is at hand and through a Go
// implementation otherwise, with the same results either way.
//
// The two back-ends agree by construction where they could drift:
//
//   - The pattern is checked and parsed once with Go's regexp/syntax (RE2).
//     ripgrep's default engine is the Rust regex crate, whose syntax is close
//     to RE2's; the pattern handed to ripgrep is rewritten where the two
//     differ: \d \w \s \b and their negations mean their ASCII classes (as
//     in Go), a { that does not open a counted repetition is a literal (as
//     in Go), [ inside a class is a literal, (?<name>) is spelled (?P<name>),
//     octal escapes become \x{..}. What neither engine supports
//     consistently is refused with an explanation: backreferences,
//     lookaround, a newline in the pattern, \D \W \S inside a class, --
//     inside a class.
//   - Matching is per line: \A and \z mean the start and end of a line, a
//     class never matches the line break, the line break is not part of the
//     text, and a trailing \r is dropped from what is shown.
//   - A file with a NUL byte anywhere is binary and skipped as a whole
//     (ripgrep is run with --no-mmap so that it reports every NUL it sees).
//   - A UTF-8 byte order mark is dropped and UTF-16 with a byte order mark
//     is decoded, as ripgrep does.
//   - Ignore files, hidden names and globs are decided by package ignore;
//     ripgrep reads the same rules (.gitignore inside git repositories,
//     .ignore, .rgignore, .git/info/exclude; the user's global git excludes
//     are left out with --no-ignore-global, for results that do not depend
//     on the machine) and its matches are checked against them once more.
//   - Symbolic links are not followed; only regular files are searched.
//   - Results are sorted by path and line by this package, so ripgrep runs
//     with all its threads (no --sort).
package grep
