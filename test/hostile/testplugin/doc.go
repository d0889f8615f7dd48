// Command yagent-plugin-naive is a custom plugin written the naive way a
// user team might: it opens the path it is given as it is, with no notion
// of the workspace. The host's one resolution must make that safe.
package main
