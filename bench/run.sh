#!/usr/bin/env bash
# Runs the benchmarks side by side and rewrites BENCHMARKS.md.
#
#   bench/run.sh            every benchmark, COUNT runs each (default 5)
#   COUNT=3 bench/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT="${COUNT:-5}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

pkgs=$(go list ./... | grep -v /bench/)
go test -run '^$' -bench . -benchmem -count "$COUNT" -timeout 30m $pkgs | tee "$out/go.txt"

{
	echo "# Benchmarks"
	echo
	echo "Written by \`make bench\` (bench/run.sh); every figure is the median of $COUNT runs measured"
	echo "side by side in one run. These machines are shared and noisy: compare ratios, not absolutes."
	echo
	echo "- machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "- go: $(go version | cut -d' ' -f3-)"
	echo "- date: $(date -u +%Y-%m-%d)"
	echo "- commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with uncommitted changes)')"
	echo
	if [ -f bench/notes.md ]; then cat bench/notes.md; echo; fi
	go run ./bench/report -in "$out/go.txt"
} > BENCHMARKS.md
echo "wrote BENCHMARKS.md"
