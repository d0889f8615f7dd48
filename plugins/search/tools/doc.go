// Package tools is the search family's tool surface: grep, search_files,
// code_outline, find_symbol, find_references and web_fetch, one tool per
// file with its description in the .md beside it. The logic lives in the
// packages under plugins/search/internal.
package tools
