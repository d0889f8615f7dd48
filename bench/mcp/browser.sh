#!/usr/bin/env bash
# Installs the MCP TypeScript SDK and Playwright MCP from package-lock.json
# into bench/mcp/node_modules (npm ci, only when the lock file changed),
# then runs browser.mjs: bin/yagent (make build) and Playwright MCP side by
# side on this machine's Chromium. Writes its Markdown section to $1
# (default: stdout) and prints a verdict per target.
#
#   bench/mcp/browser.sh /tmp/browser.md
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-}"

command -v node >/dev/null || { echo "bench/mcp: node is not installed (apt-get install nodejs npm)" >&2; exit 2; }
[ -x "$root/bin/yagent" ] || { echo "bench/mcp: no $root/bin/yagent: run make build" >&2; exit 2; }
if [ ! -f "$here/node_modules/.package-lock.json" ] || [ "$here/package-lock.json" -nt "$here/node_modules/.package-lock.json" ]; then
	(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi
args=(--yagent "$root/bin/yagent" --plugins "$root/bin/plugins")
if [ -n "$out" ]; then
	args+=(--out "$out")
fi
node "$here/browser.mjs" "${args[@]}"
