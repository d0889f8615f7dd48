// Package tools is the fs family's tools — read_file, write_file,
// search_replace_in_file, multi_edit and list_dir — served by the
// yagent-plugin-fs binary. A Service holds what outlives one call: the
// per-session record of the bytes each session last read or wrote, the
// striped path locks, and which folders were swept of temp files a killed
// write left behind.
package tools
