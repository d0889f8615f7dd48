// Package atomicfile replaces files so that neither a reader nor a crash
// ever sees half a write: the new bytes go to a temp file in the target's
// own folder (named .yagent-tmp-<pid>-<random>), are synced and given the
// target's mode, then renamed over the target. Sweep removes the temp files
// a killed writer left behind, recognized by their prefix and dead pid.
package atomicfile
