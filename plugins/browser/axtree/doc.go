// Package axtree renders a page's accessibility tree (the nodes of CDP's
// Accessibility.getFullAXTree) as the indented YAML-like outline the model
// reads, one element per line with a ref it can act on:
//
//   - heading "Sign in" [level=1] [ref=e3]
//   - textbox "Email" [ref=e4]: ada@example.com
//   - button "Submit" [ref=e5]
//
// Refs are handed out by the caller, which maps them back to DOM nodes.
package axtree
