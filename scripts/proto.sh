#!/usr/bin/env bash
# Regenerates sdk/proto/*.pb.go from sdk/proto/*.proto with protoc and the
# pinned generators, installed into bin/tools when missing or of another
# version, and the Python example's messages, examples/python/plugin_pb2.py,
# with protoc's own Python generator (and the sum the example's script holds
# of it).
#
#   scripts/proto.sh           regenerate in place
#   scripts/proto.sh --check   regenerate into a temporary folder and fail,
#                              showing the diff, when the committed files are
#                              stale
#
# The check ignores the "protoc vX" line of the generated headers, so a
# machine whose protoc differs in patch version only is not a failure; the
# script says when that happens. protoc writes the Python module itself, in
# a form that depends on its version: with a protoc other than 3.21 (Debian
# bookworm's, the one of python3-protobuf 4.21 the example runs on) the
# check compares only the module's serialized descriptor, the wire it
# describes.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

PROTOC_GEN_GO=google.golang.org/protobuf/cmd/protoc-gen-go
PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC=google.golang.org/grpc/cmd/protoc-gen-go-grpc
PROTOC_GEN_GO_GRPC_VERSION=v1.5.1
TOOLS="$root/bin/tools"
PROTO_DIR=sdk/proto
PY_DIR=examples/python
PY_SCRIPT=$PY_DIR/yagent-plugin-pyhello
PY_PROTOC=3.21

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

# generate_python <output folder>
generate_python() {
	protoc -I "$PROTO_DIR" --python_out="$1" "$PROTO_DIR"/plugin.proto
}

# pb2_sum <file>: the sha256 the example's script must hold of <file>.
pb2_sum() { sha256sum "$1" | cut -d' ' -f1; }
# script_sum: the sha256 the example's script holds.
script_sum() { sed -nE 's/^PLUGIN_PB2_SHA256 = "([0-9a-f]{64})"$/\1/p' "$PY_SCRIPT"; }

protoc_version=$(protoc --version | awk '{print $2}')
same_python_protoc=false
case "$protoc_version" in "$PY_PROTOC".*) same_python_protoc=true ;; esac

if ! $check; then
	generate "$PROTO_DIR"
	echo "proto: regenerated $PROTO_DIR"
	$same_python_protoc || echo "proto: warning: protoc $protoc_version is not $PY_PROTOC.x; $PY_DIR/plugin_pb2.py may not load with python3-protobuf 4.21" >&2
	generate_python "$PY_DIR"
	sum=$(pb2_sum "$PY_DIR/plugin_pb2.py")
	sed -i.bak -E "s/^PLUGIN_PB2_SHA256 = \"[0-9a-f]*\"$/PLUGIN_PB2_SHA256 = \"$sum\"/" "$PY_SCRIPT"
	rm -f "$PY_SCRIPT.bak"
	[ "$(script_sum)" = "$sum" ] || {
		echo "proto: $PY_SCRIPT has no PLUGIN_PB2_SHA256 line to update" >&2
		exit 1
	}
	echo "proto: regenerated $PY_DIR/plugin_pb2.py (sha256 $sum, in $PY_SCRIPT)"
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

# The Python module: the whole file when protoc is the one that wrote it,
# else its serialized descriptor; then the sum the script holds of it.
mkdir -p "$tmp/py"
generate_python "$tmp/py"
committed="$PY_DIR/plugin_pb2.py"
descriptor() { grep -E '^DESCRIPTOR = ' "$1"; }
if [ ! -f "$committed" ]; then
	echo "proto: $committed is missing; run make proto" >&2
	stale=true
elif $same_python_protoc; then
	if ! diff -u --label "$committed (committed)" --label "$committed (regenerated)" "$committed" "$tmp/py/plugin_pb2.py"; then
		stale=true
	fi
else
	echo "proto: note: protoc $protoc_version is not $PY_PROTOC.x; comparing only the descriptor of $committed" >&2
	if [ "$(descriptor "$committed")" != "$(descriptor "$tmp/py/plugin_pb2.py")" ]; then
		echo "proto: the descriptor in $committed differs from $PROTO_DIR/plugin.proto's" >&2
		stale=true
	fi
fi
if [ -f "$committed" ] && [ "$(script_sum)" != "$(pb2_sum "$committed")" ]; then
	echo "proto: $PY_SCRIPT holds sha256 $(script_sum) of plugin_pb2.py, not $(pb2_sum "$committed"); run make proto" >&2
	stale=true
fi

if $stale; then
	echo "proto: the generated code in $PROTO_DIR or $PY_DIR is stale; run make proto and commit the result" >&2
	exit 1
fi
echo "proto: $PROTO_DIR and $PY_DIR/plugin_pb2.py are up to date"
