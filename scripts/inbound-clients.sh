#!/usr/bin/env bash
# inbound-clients.sh: run the official @anthropic-ai/sdk and openai Node
# clients, at the versions pinned in scripts/inbound-clients/package.json,
# against `harnessflow serve`'s /v1/messages and /v1/chat/completions on
# loopback with the built-in scripted model (docs/inbound.md). No network
# access and no API key are needed once the packages are installed.
#
# Usage: scripts/inbound-clients.sh [extra `harnessflow serve` flags...]
#
# Environment:
#   INBOUND_CLIENTS_DIR  where the pinned packages are installed with npm
#                        (default: $HOME/.cache/harnessflow-inbound-clients;
#                        outside the repository)
#
# The scenarios (scripts/inbound-clients/run.mjs) print "ok - NAME" or
# "not ok - NAME: why", then "N passed, M failed"; the exit code is theirs.
# The proxy's log is printed when a scenario fails.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$root/scripts/inbound-clients"
dir="${INBOUND_CLIENTS_DIR:-$HOME/.cache/harnessflow-inbound-clients}"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "inbound-clients: node and npm (Node.js 20 or later) are needed" >&2
  exit 1
fi

# Install the pinned packages when the cache holds another package set.
mkdir -p "$dir"
if ! cmp -s "$src/package.json" "$dir/package.json" || ! cmp -s "$src/package-lock.json" "$dir/package-lock.json" || [ ! -d "$dir/node_modules" ]; then
  echo "inbound-clients: installing the pinned SDKs into $dir" >&2
  cp "$src/package.json" "$src/package-lock.json" "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund >&2)
fi
cp "$src/run.mjs" "$dir/run.mjs" # resolved against $dir/node_modules

work="$(mktemp -d)"
serve_pid=""
cleanup() {
  if [ -n "$serve_pid" ]; then
    kill "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "inbound-clients: building harnessflow" >&2
(cd "$root" && go build -o "$work/harnessflow" ./cmd/harnessflow)

"$work/harnessflow" serve --listen 127.0.0.1:0 "$@" >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
base=""
for _ in $(seq 1 100); do
  base="$(sed -n 's/^harnessflow serve: listening on \(http:\/\/[^,]*\),.*/\1/p' "$work/serve.out")"
  [ -n "$base" ] && break
  if ! kill -0 "$serve_pid" 2>/dev/null; then
    echo "inbound-clients: harnessflow serve exited:" >&2
    cat "$work/serve.out" "$work/serve.err" >&2
    exit 1
  fi
  sleep 0.1
done
if [ -z "$base" ]; then
  echo "inbound-clients: harnessflow serve did not start" >&2
  cat "$work/serve.out" "$work/serve.err" >&2
  exit 1
fi
echo "inbound-clients: openai $(node -p "require('$dir/node_modules/openai/package.json').version" 2>/dev/null || grep -m1 '"version"' "$dir/node_modules/openai/package.json"), @anthropic-ai/sdk pinned in $src/package.json, against $base" >&2

status=0
node "$dir/run.mjs" "$base" || status=$?
if [ "$status" -ne 0 ]; then
  echo "--- harnessflow serve log" >&2
  cat "$work/serve.err" >&2
fi
exit "$status"
