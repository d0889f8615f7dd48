#!/usr/bin/env bash
# Regenerates sdk/proto/*.pb.go from sdk/proto/*.proto with protoc and the
# pinned generators, installed into bin/tools when missing or of another
# version.
#
#   scripts/proto.sh           regenerate in place
#   scripts/proto.sh --check   regenerate into a temporary folder and fail,
#                              showing the diff, when the committed files are
#                              stale
#
# The check ignores the "protoc vX" line of the generated headers, so a
# machine whose protoc differs in patch version only is not a failure; the
# script says when that happens.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

PROTOC_GEN_GO=google.golang.org/protobuf/cmd/protoc-gen-go
PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC=google.golang.org/grpc/cmd/protoc-gen-go-grpc
PROTOC_GEN_GO_GRPC_VERSION=v1.5.1
TOOLS="$root/bin/tools"
PROTO_DIR=sdk/proto

check=false
case "${1:-}" in
"") ;;
--check) check=true ;;
*)
	echo "usage: $0 [--check]" >&2
	exit 2
	;;
esac

command -v protoc >/dev/null || {
	echo "proto: protoc not found (apt-get install -y protobuf-compiler)" >&2
	exit 1
}

# install <binary> <package> <version> <what its --version must print>
install() {
	local bin="$TOOLS/$1" pkg=$2 version=$3 want=$4
	if [ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null)" = "$want" ]; then
		return
	fi
	echo "proto: go install $pkg@$version into bin/tools" >&2
	mkdir -p "$TOOLS"
	GOBIN="$TOOLS" go install "$pkg@$version"
	if [ "$("$bin" --version 2>/dev/null)" != "$want" ]; then
		echo "proto: $bin --version does not print \"$want\"" >&2
		exit 1
	fi
}
install protoc-gen-go "$PROTOC_GEN_GO" "$PROTOC_GEN_GO_VERSION" "protoc-gen-go $PROTOC_GEN_GO_VERSION"
install protoc-gen-go-grpc "$PROTOC_GEN_GO_GRPC" "$PROTOC_GEN_GO_GRPC_VERSION" "protoc-gen-go-grpc ${PROTOC_GEN_GO_GRPC_VERSION#v}"

# generate <output folder>
generate() {
	protoc \
		--plugin=protoc-gen-go="$TOOLS/protoc-gen-go" \
		--plugin=protoc-gen-go-grpc="$TOOLS/protoc-gen-go-grpc" \
		-I "$PROTO_DIR" \
		--go_out=paths=source_relative:"$1" \
		--go-grpc_out=paths=source_relative:"$1" \
		"$PROTO_DIR"/*.proto
}

if ! $check; then
	generate "$PROTO_DIR"
	echo "proto: regenerated $PROTO_DIR"
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/fresh" "$tmp/a" "$tmp/b"
generate "$tmp/fresh"

# Compare without the protoc version line of the headers.
strip() { sed -E 's#^(//[[:space:]]+-?[[:space:]]*protoc[[:space:]]+)v[0-9.]+.*$#\1(version)#' "$1"; }
stale=false
for f in "$tmp"/fresh/*.pb.go; do
	name=$(basename "$f")
	committed="$PROTO_DIR/$name"
	if [ ! -f "$committed" ]; then
		echo "proto: $committed is missing; run make proto" >&2
		stale=true
		continue
	fi
	strip "$committed" >"$tmp/a/$name"
	strip "$f" >"$tmp/b/$name"
	if ! diff -u --label "$committed (committed)" --label "$committed (regenerated)" "$tmp/a/$name" "$tmp/b/$name"; then
		stale=true
	elif ! cmp -s "$committed" "$f"; then
		echo "proto: note: $committed names another protoc version than $(protoc --version); the code is the same" >&2
	fi
done
for f in "$PROTO_DIR"/*.pb.go; do
	if [ ! -f "$tmp/fresh/$(basename "$f")" ]; then
		echo "proto: $f has no .proto source any more; remove it" >&2
		stale=true
	fi
done
if $stale; then
	echo "proto: the generated code in $PROTO_DIR is stale; run make proto and commit the result" >&2
	exit 1
fi
echo "proto: $PROTO_DIR is up to date"
