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
pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

echo "inbound-clients: building harnessflow" >&2
(cd "$root" && go build -o "$work/harnessflow" ./cmd/harnessflow)

# start NAME PATTERN ARGS...: runs harnessflow ARGS with its output in
# $work/NAME.out and .err, and sets url to the URL its first line announces
# (PATTERN: the sed expression that extracts it). Not in a subshell, so
# that cleanup knows the process.
start() {
  local name="$1" pattern="$2"
  shift 2
  "$work/harnessflow" "$@" >"$work/$name.out" 2>"$work/$name.err" &
  local pid=$!
  pids+=("$pid")
  url=""
  for _ in $(seq 1 100); do
    url="$(sed -n "$pattern" "$work/$name.out")"
    [ -n "$url" ] && break
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "inbound-clients: harnessflow $1 ($name) exited:" >&2
      cat "$work/$name.out" "$work/$name.err" >&2
      return 1
    fi
    sleep 0.1
  done
  if [ -z "$url" ]; then
    echo "inbound-clients: harnessflow $1 ($name) did not start" >&2
    cat "$work/$name.out" "$work/$name.err" >&2
    return 1
  fi
}
listening='s/^harnessflow serve: listening on \(http:\/\/[^,]*\),.*/\1/p'
# serve with its built-in scripted chat model, for both APIs
start serve "$listening" serve --listen 127.0.0.1:0 "$@"
base="$url"
# serve in front of the scripted model's Messages endpoint: the pass-through
start model 's/^harnessflow mock-upstream: serving the scripted model at \(http:\/\/[^ ]*\) .*/\1/p' mock-upstream --listen 127.0.0.1:0
start messages "$listening" serve --listen 127.0.0.1:0 --upstream "$url" --upstream-wire messages "$@"
messages="$url"
version() { node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).version)' "$dir/node_modules/$1/package.json"; }
echo "inbound-clients: openai $(version openai), @anthropic-ai/sdk $(version @anthropic-ai/sdk) against $base (and $messages, a Messages upstream)" >&2

status=0
node "$dir/run.mjs" "$base" "$messages" || status=$?
if [ "$status" -ne 0 ]; then
  echo "--- harnessflow serve logs" >&2
  cat "$work/serve.err" "$work/messages.err" >&2
fi
exit "$status"
