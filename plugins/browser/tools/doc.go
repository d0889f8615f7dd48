// Package tools defines the browser plugin's fourteen tools over a
// session.Manager: one tool per file, its description embedded from the
// .md beside it, its input a typed struct whose schema the sdk infers.
// Every tool is Serial (one CDP connection and one current tab per
// session), has Effect browser and is never ReadOnly; browser_evaluate
// always asks.
package tools
