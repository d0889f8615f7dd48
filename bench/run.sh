#!/usr/bin/env bash
# Runs the benchmarks side by side and rewrites BENCHMARKS.md: the Go
# benchmarks (bench/report turns them into tables), the MCP servers side by
# side (bench/mcp), the browser beside Playwright MCP (bench/mcp/browser.sh),
# the tool listing's bytes (bench/listing) and the soak (test/soak). About
# 13 minutes on 2 cores.
#
#   bench/run.sh                     everything
#   COUNT=3 bench/run.sh             fewer runs of the quick Go benchmarks (default 5)
#   HEAVY_COUNT=1 bench/run.sh       runs of the 1 GiB / 2 GB benchmarks (default 2)
#   SKIP=mcp,soak bench/run.sh       leave parts out (go, heavy, mcp, browser, listing, soak); their
#                                    sections then say so
#
# A part that fails still leaves its section (with the error) in
# BENCHMARKS.md, and the script exits non-zero at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT="${COUNT:-5}"
HEAVY_COUNT="${HEAVY_COUNT:-2}"
SKIP=",${SKIP:-},"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
failed=()
began=$(date +%s)

skipped() { [[ "$SKIP" == *",$1,"* ]]; }
stamp() { echo "== $(($(date +%s) - began))s: $*" >&2; }

# The 1 GiB read and 2 GB output benchmarks run once per -count; the rest
# of test/e2e with the usual benchtime.
e2e_heavy='^(BenchmarkReadFileNearEndOf1GiB|BenchmarkRunBashHugeOutput)$'

# gobench PKG ARGS...: one package's benchmarks, appended to go.txt.
gobench() {
	local pkg="$1"
	shift
	stamp "go test -bench $pkg $*"
	if ! go test -run '^$' -benchmem -timeout 20m "$@" "$pkg" 2>&1 | tee -a "$out/go.txt"; then
		failed+=("go benchmarks in $pkg")
	fi
}

if ! skipped go; then
	# Packages with benchmarks, found by their declarations, so that a new
	# one is measured without editing this script.
	pkgs=$(grep -rlE --include='*_test.go' --exclude-dir=node_modules --exclude-dir=.git --exclude-dir=bench \
		'^func Benchmark[A-Za-z0-9_]*\(b \*testing\.B\)' . | xargs -n1 dirname | sort -u)
	for pkg in $pkgs; do
		case "$pkg" in
		./test/e2e)
			gobench "$pkg" -bench "^(BenchmarkCallOverhead|BenchmarkServeStartToList|BenchmarkReadOverFront|BenchmarkServeRunBash_BackgroundHoldsPipes)$" -count "$COUNT"
			if ! skipped heavy; then
				gobench "$pkg" -bench "$e2e_heavy" -benchtime 1x -count "$HEAVY_COUNT"
			fi
			;;
		./plugins/fs/tools)
			gobench "$pkg" -bench '^(BenchmarkEdit_10MB|BenchmarkReadFile_4K)$' -count "$COUNT"
			if ! skipped heavy; then
				YAGENT_BENCH_READ_SIZE=1G gobench "$pkg" -bench '^BenchmarkReadFile_WindowNearEnd$' -benchtime 2x -count "$HEAVY_COUNT"
			fi
			;;
		./plugins/search/tools)
			# A Go-back-end search of GOROOT takes about a second: a few
			# iterations a run.
			gobench "$pkg" -bench . -benchtime 3x -count "$COUNT"
			;;
		*)
			gobench "$pkg" -bench . -count "$COUNT"
			;;
		esac
	done
fi

# section NAME TITLE SCRIPT: runs SCRIPT, which writes the section TITLE to
# $out/NAME.md, or writes there why it did not run or failed.
section() {
	local name="$1" title="$2" script="$3" md="$out/$1.md"
	if skipped "$name"; then
		printf '## %s\n\nNot run this time (SKIP=%s).\n' "$title" "$name" >"$md"
		return
	fi
	stamp "$script"
	if ! "$script" "$md" 2>"$out/$name.err"; then
		failed+=("$script")
		{
			printf '## %s\n\nThe run failed:\n\n```\n' "$title"
			tail -n 20 "$out/$name.err"
			printf '```\n'
		} >"$md"
	fi
	cat "$out/$name.err" >&2
}

section mcp "MCP servers side by side" bench/mcp/run.sh
section browser "Browser side by side with Playwright MCP" bench/mcp/browser.sh
mcp="$out/mcp.md"
browser="$out/browser.md"

listing="$out/listing.md"
if skipped listing; then
	printf '## Context: the tool listing'"'"'s bytes\n\nNot run this time (SKIP=listing).\n' >"$listing"
else
	stamp "bench/listing"
	if ! go run ./bench/listing >"$listing" 2>"$out/listing.err"; then
		failed+=("bench/listing")
		{
			printf '## Context: the tool listing'"'"'s bytes\n\nThe run failed:\n\n```\n'
			tail -n 20 "$out/listing.err"
			printf '```\n'
		} >"$listing"
	fi
fi

soak="$out/soak.md"
if skipped soak; then
	printf '## Soak\n\nNot run this time (SKIP=soak).\n' >"$soak"
else
	stamp "test/soak"
	if ! YAGENT_SOAK=1 YAGENT_SOAK_OUT="$soak" go test -count=1 -timeout 20m -run TestSoak -v ./test/soak >"$out/soak.log" 2>&1; then
		failed+=("test/soak")
		{
			[ -s "$soak" ] && cat "$soak" && echo
			printf '**The soak failed:**\n\n```\n'
			grep -E '^\s+(soak|proc)_test\.go:[0-9]+:' "$out/soak.log" | grep -v '## Soak' | head -n 20 || tail -n 20 "$out/soak.log"
			printf '```\n'
		} >"$soak.tmp"
		mv "$soak.tmp" "$soak"
	fi
	tail -n 3 "$out/soak.log" >&2
fi

{
	echo "# Benchmarks"
	echo
	echo "Written by \`make bench\` (bench/run.sh) in $(($(date +%s) - began)) s; unless a section says otherwise, every figure"
	echo "is the median of the runs measured side by side in one run ($COUNT for the quick Go benchmarks, $HEAVY_COUNT for the"
	echo "1 GiB and 2 GB ones). These machines are shared and noisy: compare ratios, not absolutes."
	echo
	echo "- machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "- go: $(go version | cut -d' ' -f3-); node: $(node --version 2>/dev/null || echo none)"
	echo "- date: $(date -u +%Y-%m-%d)"
	echo "- commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!BENCHMARKS.md' || echo ' (with uncommitted changes)')"
	echo
	if [ -f bench/notes.md ]; then
		cat bench/notes.md
		echo
	fi
	if [ -s "$out/go.txt" ]; then
		go run ./bench/report -in "$out/go.txt"
	else
		printf '## Go benchmarks\n\nNot run this time (SKIP=go).\n'
	fi
	echo
	cat "$mcp"
	echo
	cat "$browser"
	echo
	cat "$listing"
	echo
	cat "$soak"
	# Sections measured by hand (before/after comparisons, A/B runs of
	# settings): kept as written, each saying how it was measured.
	if [ -f bench/manual.md ]; then
		echo
		cat bench/manual.md
	fi
} >"$out/BENCHMARKS.md"
mv "$out/BENCHMARKS.md" BENCHMARKS.md
stamp "wrote BENCHMARKS.md"
if [ ${#failed[@]} -gt 0 ]; then
	printf 'bench: failed: %s\n' "${failed[@]}" >&2
	exit 1
fi
