// Package surface is the one source of tools
// (docs/ARCHITECTURE.md#core-rules §1): it binds the plugins' specs to the
// static registry, filters them by the profile, adds the host-native tools,
// attaches the guard to every adapter once, decides deferred mode and the
// budget demotion, lists tools per session, and runs calls with Serial tools
// one at a time per session and family.
//
// A Surface is immutable once built and safe for concurrent use. Tests
// build one with NewSurfaceFromAdapters, never a second carrier of tools.
package surface
