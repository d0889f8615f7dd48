// Package toolspec is the host's registry of static tool specs: every tool
// the host knows by name, bound to its family, with the Effect, parameter
// roles, Tier, Serial, ReadOnly, AlwaysAsk and Brief that the host enforces
// whatever a plugin declares.
//
// This is the one place in the host where tool names are spelled out; code
// elsewhere refers to the constants here and dispatches on Effect and roles.
package toolspec
