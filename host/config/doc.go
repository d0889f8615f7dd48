// Package config loads yagent's profiles and settings: the embedded built-in
// profiles, the user's (~/.yagent/) and the project's (.yagent/) files, the
// YAGENT_* environment and flags, in that order, rejecting unknown keys.
package config
