#!/usr/bin/env bash
# Applies each patch under testdata/mutants in turn, runs the gate test its
# first line names, and fails if any patch leaves that test green.
#
# A patch starts with:  # gate: <go test -run regexp> <package>
set -uo pipefail
cd "$(dirname "$0")/.."

only="${1:-}"
shopt -s nullglob
patches=(testdata/mutants/*.patch)
if [ ${#patches[@]} -eq 0 ]; then
	echo "mutants: no patches under testdata/mutants" >&2
	exit 1
fi

if ! git diff --quiet -- . ':(exclude)testdata/mutants'; then
	echo "mutants: the work tree has uncommitted changes; commit or stash them first" >&2
	exit 1
fi

survived=()
killed=0
for p in "${patches[@]}"; do
	[ -n "$only" ] && [[ "$p" != *"$only"* ]] && continue
	header=$(head -n1 "$p")
	if [[ ! "$header" =~ ^#\ gate:\ ([^[:space:]]+)\ ([^[:space:]]+) ]]; then
		echo "mutants: $p: first line must be '# gate: <regexp> <package>'" >&2
		exit 1
	fi
	run="${BASH_REMATCH[1]}"
	pkg="${BASH_REMATCH[2]}"
	if ! tail -n +2 "$p" | git apply --whitespace=nowarn -; then
		echo "mutants: $p does not apply" >&2
		exit 1
	fi
	if go test -count=1 -timeout 300s -run "$run" "$pkg" >/tmp/mutant.log 2>&1; then
		echo "SURVIVED  $p  ($run in $pkg stayed green)"
		survived+=("$p")
	else
		echo "killed    $p  ($run in $pkg)"
		killed=$((killed + 1))
	fi
	tail -n +2 "$p" | git apply -R --whitespace=nowarn - || { echo "mutants: cannot revert $p" >&2; exit 1; }
done

echo "mutants: $killed killed, ${#survived[@]} survived"
[ ${#survived[@]} -eq 0 ]
