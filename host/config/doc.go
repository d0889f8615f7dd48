// Package config loads yagent's profiles and settings: the embedded built-in
// profiles, the user's (~/.yagent/), the YAGENT_* environment and flags, the
// admin's managed layer (/etc/yagent/) above them all, and the project's
// (.yagent/) files, which can only narrow. Unknown keys are rejected.
//
// # Authority, lowest first
//
//  1. the base profile: a managed profile (/etc/yagent/profiles/NAME.yaml),
//     else the user's (~/.yagent/profiles/NAME.yaml), else a built-in
//     (package profiles); a project profile never replaces one of these;
//  2. ~/.yagent/config.yaml: a partial profile, plus `profile: NAME`;
//  3. the environment: YAGENT_PROFILE, YAGENT_DEFERRED,
//     YAGENT_SCHEMA_BUDGET_BYTES and YAGENT_FAMILIES (comma-separated);
//     an empty variable counts as unset;
//  4. flags (LoadOptions.Profile and LoadOptions.Overrides);
//  5. the managed layer: /etc/yagent/config.yaml, a ceiling no layer below
//     can widen.
//
// The base profile is chosen by the highest of layers 2–4 naming one, else
// by the managed config's `profile:`, else "coder". Among layers 1–4 later
// layers override earlier ones key by key: lists replace, maps merge, null
// clears (the user may loosen a built-in: it is their own profile). Each
// layer is checked on its own, so an unknown key or a bad value is reported
// with the file (or variable, or "flags") and the key. Loaded.Origins and
// `yagent profiles show` name the layers each key came from.
//
// # The managed layer is a ceiling
//
// Over the profile layers 1–4 resolve to, the managed config (and the
// managed profile, when one is the base) applies as:
//
//   - deny, exec.rules: union; a lower allow rule that would outrank a
//     managed ask rule (same program, longer argv prefix) is dropped. An
//     exec deny stands under -y (package guard).
//   - families: intersection with the lower result (if that leaves none,
//     the managed families, with a warning); grant: the same, over globs.
//     families names first-party families; a custom plugin's tools are
//     held back by deny or grant globs, the plugin itself by
//     plugins.NAME.enabled: false.
//   - read_paths, skill_dirs, network.allow: union: the admin's own grants.
//   - plugins, tiers: maps merge, the admin's values win, but for
//     plugins.NAME.enabled, where off wins: the admin switches a plugin
//     off, never on over a lower layer's off; deferred,
//     schema_budget_bytes and plugin_dev_dir: the admin's value wins.
//   - sandbox.mode and sandbox.network: a floor of strictness (off < on <
//     required; network off beats on): a lower layer may be stricter, never
//     looser; sandbox.read and sandbox.write: union; sandbox.pids,
//     memory_mb and tmp_size_mb: caps (a lower value stays; a higher one,
//     or 0, none, takes the admin's; the admin's 0 caps nothing);
//     sandbox.unix_sockets: intersection (a socket reaches commands only
//     where both lists name it; the admin's [] leaves none).
//
// /etc/yagent/plugins.lock (Loaded.ManagedLock) pins plugins: a plugin it
// names must have that sum, whatever the user's lock says (package app).
//
// The managed layer is trusted only when its files, its folders and every
// folder above them are owned by root and writable by no one else (a sticky
// folder such as /tmp may sit above it). Otherwise Load fails, naming the
// file and the fix (chown root, chmod go-w): ignoring it would let an
// admin's deny vanish without a word, a widening. A missing /etc/yagent is
// no managed layer. Against commands the managed exec rules hold only as
// far as the guard sees the command; with the kernel sandbox (Landlock
// and seccomp on exec, docs/ARCHITECTURE.md#sandbox) they will hold for
// every program a command starts.
//
// # The project only narrows, trusted or not
//
// <workspace>/.yagent/config.yaml, and any profile it or a higher layer
// selects that only the project defines (<workspace>/.yagent/profiles/),
// apply after layers 1–4 and before the managed layer, as narrowings:
//
//   - deny: union; exec.rules: its deny and ask rules join; its allow rules
//     are dropped. `exec: null`, `exec: {rules: []}` and `deny: []` clear
//     nothing.
//   - families: intersection (a family the profile lacks is dropped and
//     named); grant: intersection over globs.
//   - plugins: plugins.NAME.enabled: false switches plugin NAME off; every
//     other plugin setting (they name programs to run) and enabled: true
//     are dropped and named.
//   - plugin_dev_dir: refused with a warning of its own: the binaries of a
//     dev folder run without a pin check.
//   - read_paths, skill_dirs, network.allow, and any key not listed here:
//     dropped and named in Loaded.Warnings.
//   - sandbox: its mode may only rise (off → on → required) and its network
//     only go off; its sandbox.read and sandbox.write are dropped and named;
//     sandbox.pids, memory_mb and tmp_size_mb may only go down (a positive
//     number below the value above, any where that is 0, none); a higher
//     one, or 0, is dropped and named; sandbox.unix_sockets keeps of the
//     list above only the sockets it names ([] removes all), and a socket
//     it adds is dropped and named.
//   - deferred, schema_budget_bytes, tiers: set as by any layer, between the
//     user's config and the environment; they shape the listing and grant
//     nothing (a denied tool stays denied whatever its tier).
//   - `profile: NAME` never chooses the base: NAME's profile (built-in,
//     user's or the project's) narrows it like the project config does.
//   - a project profile named like a managed, user or built-in profile is
//     ignored and named: it would shadow that profile.
//
// Authorizing a project (the "project" answer, authorized_projects in
// ~/.yagent/settings.json) gives its calls a pass (package authz); it never
// lets the project's files widen the profile.
package config
