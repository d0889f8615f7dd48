// Package fromconfig turns a loaded profile (host/config) into the policy the
// guard reads (guard.Policy), so that host/guard itself does not import the
// profile loader and plugins' tests (sdk/plugintest) can run the same guard.
package fromconfig
