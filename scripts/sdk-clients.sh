#!/usr/bin/env bash
# sdk-clients.sh: run real SDK clients — the official openai Node SDK and
# the Vercel AI SDK's OpenAI Responses provider, at the versions pinned in
# scripts/sdk-clients/package.json — against `harnessflow serve` on
# loopback with the built-in scripted model (scripts/sdk-clients/script.json).
# No network access and no API key are needed once the packages are
# installed.
#
# Usage: scripts/sdk-clients.sh [extra `harnessflow serve` flags...]
#   e.g. scripts/sdk-clients.sh --mode async
#
# Environment:
#   SDK_CLIENTS_DIR  where the pinned packages are installed with npm
#                    (default: $HOME/.cache/harnessflow-sdk-clients; outside
#                    the repository)
#
# The scenarios (scripts/sdk-clients/run.mjs) print "ok - NAME" or
# "not ok - NAME: why", then "N passed, M failed"; the exit code is theirs.
# The proxy's log is printed when a scenario fails.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$root/scripts/sdk-clients"
dir="${SDK_CLIENTS_DIR:-$HOME/.cache/harnessflow-sdk-clients}"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "sdk-clients: node and npm (Node.js 20 or later) are needed" >&2
  exit 1
fi

# Install the pinned packages when the cache holds another package set.
mkdir -p "$dir"
if ! cmp -s "$src/package.json" "$dir/package.json" || ! cmp -s "$src/package-lock.json" "$dir/package-lock.json" || [ ! -d "$dir/node_modules" ]; then
  echo "sdk-clients: installing the pinned SDKs into $dir" >&2
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

echo "sdk-clients: building harnessflow" >&2
(cd "$root" && go build -o "$work/harnessflow" ./cmd/harnessflow)

"$work/harnessflow" serve --listen 127.0.0.1:0 --script "$src/script.json" "$@" >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
base=""
for _ in $(seq 1 100); do
  base="$(sed -n 's/^harnessflow serve: listening on \(http:\/\/[^,]*\),.*/\1/p' "$work/serve.out")"
  [ -n "$base" ] && break
  if ! kill -0 "$serve_pid" 2>/dev/null; then
    echo "sdk-clients: harnessflow serve exited:" >&2
    cat "$work/serve.out" "$work/serve.err" >&2
    exit 1
  fi
  sleep 0.1
done
if [ -z "$base" ]; then
  echo "sdk-clients: harnessflow serve did not start" >&2
  cat "$work/serve.out" "$work/serve.err" >&2
  exit 1
fi
echo "sdk-clients: openai $(node -p "require('$dir/node_modules/openai/package.json').version"), ai $(node -p "require('$dir/node_modules/ai/package.json').version"), @ai-sdk/openai $(node -p "require('$dir/node_modules/@ai-sdk/openai/package.json').version") against $base/v1" >&2

status=0
node "$dir/run.mjs" "$base/v1" || status=$?
if [ "$status" -ne 0 ]; then
  echo "--- harnessflow serve log" >&2
  cat "$work/serve.err" >&2
fi
exit "$status"
