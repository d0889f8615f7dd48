#!/usr/bin/env bash
# Builds the release archives, reproducibly: the same commit and the same
# Go give the same bytes, on any machine, with any build cache.
#
#   scripts/dist.sh                 every target below
#   scripts/dist.sh linux/arm64     only the targets named
#
# For each target, as make build does: the five plugins first, then the
# host linked with their sums (scripts/sums.sh), so it trusts those very
# binaries wherever the archive is unpacked. Each archive is
# dist/yagent_<version>_<os>_<arch>.tar.gz, one top folder of that name
# holding yagent, plugins/yagent-plugin-*, README.md and LICENSE;
# dist/SHA256SUMS lists the archives' sums (sha256sum's format). dist/ is
# made anew.
#
# <version> is git describe --tags --always --dirty. What makes the bytes
# the same:
#   - CGO_ENABLED=0, GOAMD64=v1, GOARM64=v8.0: no C toolchain, no
#     machine's choice of instructions;
#   - -trimpath (no folder of this machine in the binaries), -ldflags
#     -buildid= (no build ID, which hashes the action's inputs);
#   - GOFLAGS=-mod=readonly for these builds, in place of whatever the
#     environment or go env sets there (a -race or -tags would change the
#     binaries);
#   - -buildvcs=false, always, whatever GOFLAGS says: the script stamps the
#     host itself, with -ldflags -X main.version=<version> -X
#     main.commit=<git rev-parse HEAD> (and main.commitModified=true for a
#     -dirty tree), which yagent version prints. go's own stamp would make
#     the bytes depend on how the source was checked out: go finds no
#     repository in a linked git worktree, whose .git is a file, and stamps
#     nothing there, or the commit of a repository that encloses it
#     (golang/go#58218). Without git (a source tarball), VERSION, COMMIT
#     and SOURCE_DATE_EPOCH are taken from the environment;
#   - archives of sorted entries, each with the commit's time as its mtime
#     (SOURCE_DATE_EPOCH = git log -1 --format=%ct), owner and group 0,
#     fixed modes, compressed with gzip -n (no name, no time).
# The binaries depend on the Go release alone (go.mod names it); the
# archives' bytes also on tar's and gzip's. Only a tree with no
# uncommitted changes is a release: a -dirty version says otherwise. Needs
# GNU tar (gtar on macOS).
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	targets=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64)
fi
families=(fs shell search browser cognitive)

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	version=$(git describe --tags --always --dirty)
	commit=$(git rev-parse HEAD)
	epoch=$(git log -1 --format=%ct)
else
	version=${VERSION:?dist: no git here: set VERSION, COMMIT and SOURCE_DATE_EPOCH}
	commit=${COMMIT:?dist: no git here: set VERSION, COMMIT and SOURCE_DATE_EPOCH}
	epoch=${SOURCE_DATE_EPOCH:?dist: no git here: set VERSION, COMMIT and SOURCE_DATE_EPOCH}
fi
stamp="-X main.version=$version -X main.commit=$commit"
case $version in
*-dirty)
	stamp="$stamp -X main.commitModified=true"
	echo "dist: the tree has uncommitted changes: $version is no release" >&2
	;;
esac

tar=tar
if ! tar --version 2>/dev/null | grep -q 'GNU tar'; then
	tar=gtar
	command -v gtar >/dev/null || { echo "dist: needs GNU tar (tar or gtar) for sorted, dated archives" >&2; exit 1; }
fi
sha256() {
	if command -v sha256sum >/dev/null 2>&1; then sha256sum "$@"; else shasum -a 256 "$@"; fi
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf dist
mkdir dist

export CGO_ENABLED=0 GOAMD64=v1 GOARM64=v8.0 GOFLAGS=-mod=readonly
flags=(-trimpath -buildvcs=false)
pkgs=()
for f in "${families[@]}"; do
	pkgs+=("./cmd/yagent-plugin-$f")
done
echo "dist: $version (commit $commit, $epoch), $(go version | cut -d' ' -f3)" >&2

archives=()
for t in "${targets[@]}"; do
	goos=${t%/*} goarch=${t#*/}
	name=yagent_${version}_${goos}_${goarch}
	dir=$work/$name
	start=$SECONDS
	mkdir -p "$dir/plugins"
	GOOS=$goos GOARCH=$goarch go build "${flags[@]}" -ldflags "-buildid=" -o "$dir/plugins/" "${pkgs[@]}"
	ld="-buildid= $stamp $(scripts/sums.sh --ldflags "$dir/plugins" "${families[@]}")"
	GOOS=$goos GOARCH=$goarch go build "${flags[@]}" -ldflags "$ld" -o "$dir/yagent" ./cmd/yagent
	cp README.md LICENSE "$dir/"
	chmod 0755 "$dir" "$dir/plugins" "$dir/yagent" "$dir"/plugins/*
	chmod 0644 "$dir/README.md" "$dir/LICENSE"
	$tar --sort=name --format=gnu --mtime="@$epoch" --owner=0 --group=0 --numeric-owner \
		-C "$work" -cf - "$name" | gzip -n -9 >"dist/$name.tar.gz"
	archives+=("$name.tar.gz")
	echo "dist: dist/$name.tar.gz ($((SECONDS - start)) s)" >&2
done

# Sorted by name, whatever order the targets were named in.
(cd dist && sha256 $(printf '%s\n' "${archives[@]}" | LC_ALL=C sort)) >dist/SHA256SUMS
cat dist/SHA256SUMS
