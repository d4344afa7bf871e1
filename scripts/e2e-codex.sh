#!/usr/bin/env bash
# e2e-codex.sh: run the opt-in end-to-end test with the real Codex CLI
# (e2e/codex_test.go). Codex talks to an in-process harnessflow proxy in
# front of the built-in scripted model, on loopback only: no network access
# and no API key are needed once Codex is installed.
#
# Usage: scripts/e2e-codex.sh [go test flags...]
#
# Environment:
#   HARNESSFLOW_CODEX  a Codex binary to use as is (skips the install)
#   CODEX_DIR          where the pinned Codex is installed with npm
#                      (default: $HOME/.cache/harnessflow-codex)
#
# The pinned release is installed (npm, needs Node.js) when CODEX_DIR holds
# no Codex or another version.
set -euo pipefail

CODEX_VERSION=0.171.0
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [ -z "${HARNESSFLOW_CODEX:-}" ]; then
  dir="${CODEX_DIR:-$HOME/.cache/harnessflow-codex}"
  bin="$dir/node_modules/.bin/codex"
  have="$("$bin" --version 2>/dev/null || true)"
  if [ "$have" != "codex-cli $CODEX_VERSION" ]; then
    if ! command -v npm >/dev/null; then
      echo "e2e-codex: npm (Node.js) is needed to install @openai/codex@$CODEX_VERSION" >&2
      exit 1
    fi
    echo "e2e-codex: installing @openai/codex@$CODEX_VERSION into $dir" >&2
    mkdir -p "$dir"
    npm install --prefix "$dir" --save-exact --no-audit --no-fund "@openai/codex@$CODEX_VERSION" >&2
  fi
  HARNESSFLOW_CODEX="$bin"
fi
echo "e2e-codex: using $HARNESSFLOW_CODEX ($("$HARNESSFLOW_CODEX" --version))" >&2

# The terminus-2 route types into tmux on the client's machine.
if ! command -v tmux >/dev/null 2>&1; then
  echo "e2e-codex: installing tmux (apt-get) for the terminus-2 route" >&2
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null; } ||
    echo "e2e-codex: tmux could not be installed; the terminus-2 tmux tests will skip" >&2
fi

cd "$root"
HARNESSFLOW_CODEX="$HARNESSFLOW_CODEX" exec go test ./e2e -run Codex -v -count=1 "$@"
