#!/bin/sh
# Prints the sums of the first-party plugin binaries in a folder, as the
# host is linked with them (make build), so that it trusts those very
# binaries wherever they lie, even in a folder commands can write:
#
#   scripts/sums.sh DIR [NAME...]            fs:<sha256>,shell:<sha256>,...
#   scripts/sums.sh --ldflags DIR [NAME...]  -X <the host's variable>=fs:<sha256>,...
#
# NAME defaults to every family; a NAME whose yagent-plugin-NAME DIR lacks
# is left out. sha256sum on Linux, shasum -a 256 on macOS.
set -eu
var=github.com/yagent/yagent/host/pluginmgr.builtSums
ldflags=
if [ "${1:-}" = --ldflags ]; then
	ldflags=1
	shift
fi
dir=${1:?usage: scripts/sums.sh [--ldflags] DIR [NAME...]}
shift
[ $# -gt 0 ] || set -- fs shell search browser cognitive
sum() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum "$1"
	else
		shasum -a 256 "$1"
	fi | cut -d' ' -f1
}
out=
for name in "$@"; do
	bin=$dir/yagent-plugin-$name
	[ -f "$bin" ] || continue
	out=${out:+$out,}$name:$(sum "$bin")
done
if [ -n "$ldflags" ]; then
	printf -- '-X %s=%s\n' "$var" "$out"
else
	printf '%s\n' "$out"
fi
