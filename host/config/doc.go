// Package config loads yagent's profiles and settings: the embedded built-in
// profiles, the user's (~/.yagent/) and the project's (.yagent/) files, the
// YAGENT_* environment and flags, in that order, rejecting unknown keys.
//
// Layers, lowest first:
//
//  1. the base profile: a built-in (package profiles), or a custom whole
//     profile in ~/.yagent/profiles/NAME.yaml or <workspace>/.yagent/profiles/NAME.yaml
//     (the project's wins over the user's, both over a built-in of that name);
//  2. ~/.yagent/config.yaml: a partial profile, plus `profile: NAME`;
//  3. <workspace>/.yagent/config.yaml: the same;
//  4. the environment: YAGENT_PROFILE, YAGENT_DEFERRED,
//     YAGENT_SCHEMA_BUDGET_BYTES and YAGENT_FAMILIES (comma-separated);
//     an empty variable counts as unset;
//  5. flags (LoadOptions.Profile and LoadOptions.Overrides).
//
// The base profile is chosen by the highest layer that names one, else
// "coder". Later layers override earlier ones key by key: lists replace,
// maps merge. Each layer is checked on its own, so an unknown key or a bad
// value is reported with the file (or variable, or "flags") and the key.
package config
