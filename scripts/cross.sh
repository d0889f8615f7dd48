#!/usr/bin/env bash
# Builds yagent for the machines its users run it on, and vets it there
# with the test files, so a change that breaks another system fails here.
#
#   scripts/cross.sh                  every target below
#   scripts/cross.sh darwin/arm64     only the targets named
#
# Each target builds the host, the first-party plugins and the example
# plugins (linked, into a throwaway folder), then runs go vet over the
# whole module with the test files. windows/amd64 and freebsd/amd64 build
# and vet the sdk, the two halves of the wire under it (internal/wire and
# internal/remote) and the hello example only: a team may ship a plugin
# there, but the host itself runs on Linux and macOS (see the README).
#
# The other systems' packages are compiled without optimisation (-N -l):
# nothing runs them, and it halves the time a cold build takes. The
# linux/amd64 build keeps make build's flags, so it comes from its cache.
set -euo pipefail
cd "$(dirname "$0")/.."

full=(linux/amd64 linux/arm64 darwin/arm64 darwin/amd64)
plugin_only=(windows/amd64 freebsd/amd64)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	targets=("${full[@]}" "${plugin_only[@]}")
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

failed=()
for t in "${targets[@]}"; do
	goos=${t%/*} goarch=${t#*/}
	flags=()
	if [ "$t" != "$(go env GOHOSTOS)/$(go env GOHOSTARCH)" ]; then
		flags=(-gcflags=all=-N\ -l)
	fi
	if [[ " ${plugin_only[*]} " == *" $t "* ]]; then
		build=(./sdk/... ./internal/wire ./internal/remote ./examples/hello)
		vet=(./sdk/... ./internal/wire ./internal/remote ./examples/hello)
	else
		build=(./cmd/... ./plugins/... ./examples/...)
		vet=(./...)
	fi
	start=$SECONDS
	echo "cross: $t: go build ${build[*]}; go vet ${vet[*]}" >&2
	if GOOS=$goos GOARCH=$goarch go build "${flags[@]}" -o "$out/$goos-$goarch/" "${build[@]}" &&
		GOOS=$goos GOARCH=$goarch go vet "${flags[@]}" "${vet[@]}"; then
		echo "cross: $t ok ($((SECONDS - start)) s)" >&2
	else
		echo "cross: $t FAILED" >&2
		failed+=("$t")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "cross: failed for ${failed[*]}" >&2
	exit 1
fi
