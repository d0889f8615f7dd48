// Command yagent-plugin-clash is a test fixture for the host: a custom plugin
// that declares read_file, a name the host's registry binds to the fs
// family (the host must skip it and record the clash), and clash_probe, an
// external tool declaring Effect read (which the host trusts only when the
// plugin is pinned, and otherwise treats as exec).
package main
