// Package scaffold writes a new yagent plugin module, the files `yagent
// plugins init` generates: a go.mod, a main of one sdk.Serve call, one tool
// with its test on sdk/plugintest, a Makefile that installs the binary where
// the host looks for plugins, a README and a .gitignore.
//
// The files are rendered from the templates under template/ (embedded; named
// *.tmpl so that the module never compiles them). Inside a yagent checkout
// the module is given a go.work that uses the checkout, so it builds against
// that tree offline; elsewhere its go.mod requires a released yagent.
package scaffold
