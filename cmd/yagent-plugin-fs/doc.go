// Command yagent-plugin-fs serves the fs family: read_file, write_file,
// search_replace_in_file, multi_edit and list_dir. The tools live in
// plugins/fs/tools; this binary is one sdk.Serve call.
//
// Temp files of a write killed mid-way (.yagent-tmp-<pid>-<random>, beside
// their target) are removed on the plugin's first call for a workspace
// (a bounded sweep of its tree) and before the first write into a folder.
package main
