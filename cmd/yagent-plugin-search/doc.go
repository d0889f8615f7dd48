// Command yagent-plugin-search is the search family's plugin: grep,
// search_files, code_outline, find_symbol, find_references and web_fetch,
// served to the yagent host over gRPC. Its settings (the profile's
// plugins.search section) are rg_path and ctags_path: a binary tried
// before PATH, or "off".
package main
