// Package session runs the browser of each agent session: one Chromium
// process per session, started lazily with an argv built in Go (package
// chrome) in a process group of its own that is reported to the host, and
// one CDP connection (chromedp over the browser's pipe) shared by the
// session's tabs. It keeps the tabs (their URLs, order and the current
// one) in the session's state folder so a restarted plugin reopens them,
// hands out element refs from accessibility snapshots and maps them back
// to DOM nodes, collects console messages per tab, and answers JavaScript
// dialogs so no tab freezes.
//
// Calls of one session run one at a time; sessions run in parallel.
package session
