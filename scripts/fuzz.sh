#!/usr/bin/env bash
# Runs every fuzz target of the repository, one after the other, for a while
# each, and names the ones that failed.
#
#   scripts/fuzz.sh                 30s each
#   scripts/fuzz.sh 3m              3 minutes each
#   scripts/fuzz.sh 1m 'Adapter'    only targets whose package or name matches
#   FUZZ_PARALLEL=1 scripts/fuzz.sh one worker (default: GOMAXPROCS)
#   scripts/fuzz.sh --list          the targets, nothing run
#
# Targets are found by their declaration (func FuzzX(f *testing.F)) in any
# _test.go file, so a package that gains one is fuzzed without editing this
# script. A failing input is written by go test to the package's
# testdata/fuzz/FuzzX/ folder; keep it there once the bug is fixed.
set -uo pipefail
cd "$(dirname "$0")/.."

list=0
if [ "${1:-}" = "--list" ]; then
	list=1
	shift
fi
fuzztime="${1:-30s}"
filter="${2:-}"
parallel=()
if [ -n "${FUZZ_PARALLEL:-}" ]; then
	parallel=(-parallel "$FUZZ_PARALLEL")
fi

# "dir target" pairs, sorted.
targets=$(grep -rEo --include='*_test.go' --exclude-dir=node_modules --exclude-dir=.git \
	'^func Fuzz[A-Za-z0-9_]*\([a-z]+ \*testing\.F\)' . |
	sed -E 's|^\./(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*|\1 \2|' | sort -u)

if [ -n "$filter" ]; then
	targets=$(echo "$targets" | grep -E -- "$filter" || true)
fi
if [ -z "$targets" ]; then
	echo "fuzz: no fuzz targets found${filter:+ matching $filter}" >&2
	exit 1
fi
if [ "$list" = 1 ]; then
	echo "$targets" | awk '{print "./" $1 "\t" $2}'
	exit 0
fi

failed=()
summary=()
while read -r dir target; do
	echo "== ./$dir $target ($fuzztime)"
	start=$(date +%s)
	if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "${parallel[@]}" "./$dir"; then
		status=ok
	else
		status=FAIL
		failed+=("./$dir $target")
	fi
	summary+=("$(printf '%-4s %4ss  ./%s %s' "$status" "$(($(date +%s) - start))" "$dir" "$target")")
done <<<"$targets"

echo
echo "== fuzz summary ($fuzztime each)"
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz: ${#failed[@]} target(s) failed; the failing inputs are under each package's testdata/fuzz/" >&2
	exit 1
fi
