#!/usr/bin/env bash
# Installs the MCP TypeScript SDK and @modelcontextprotocol/server-filesystem
# from package-lock.json into bench/mcp/node_modules (npm ci, only when the
# lock file changed), builds the floor (bench/floor) into bin/bench/floor,
# then runs bench.mjs against bin/yagent, the floor and server-filesystem,
# writes its Markdown fragment to $1 (default: stdout) and prints a verdict
# per target to stdout.
#
#   bench/mcp/run.sh /tmp/mcp.md
#   ROUNDS=1 STARTS=3 bench/mcp/run.sh      a quick try
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-}"

command -v node >/dev/null || { echo "bench/mcp: node is not installed (apt-get install nodejs npm)" >&2; exit 2; }
[ -x "$root/bin/yagent" ] || { echo "bench/mcp: no $root/bin/yagent: run make build" >&2; exit 2; }
command -v go >/dev/null || { echo "bench/mcp: go is not installed: it builds the floor (bench/floor)" >&2; exit 2; }
(cd "$root" && go build -o bin/bench/floor ./bench/floor)
if [ ! -f "$here/node_modules/.package-lock.json" ] || [ "$here/package-lock.json" -nt "$here/node_modules/.package-lock.json" ]; then
	(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi

args=(--yagent "$root/bin/yagent" --floor "$root/bin/bench/floor" --corpus "$root/plugins/fs/testdata/corpus"
	--rounds "${ROUNDS:-5}" --starts "${STARTS:-15}" --reads "${READS:-300}"
	--inflight "${INFLIGHT:-32}" --calls "${CALLS:-3000}")
if [ -n "$out" ]; then
	args+=(--out "$out")
fi
node "$here/bench.mjs" "${args[@]}"
