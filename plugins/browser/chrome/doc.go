// Package chrome finds the Chromium binary and builds the argv it starts
// with: headless, a fresh profile folder, no background networking, no
// crash reporter, --no-sandbox only as root. The argv is built here in Go
// and handed to the process as is; no shell ever reads it.
package chrome
