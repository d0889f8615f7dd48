// Package install tests yagent as the README's install line installs it:
// go install ./cmd/... into an empty GOBIN, then the host run from there,
// finding and trusting the plugins beside it.
package install
