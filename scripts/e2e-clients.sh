#!/usr/bin/env bash
# e2e-clients.sh: run the real Claude Code and opencode against serve's
# /v1/messages and /v1/chat/completions (e2e/claude_inbound_test.go,
# e2e/opencode_inbound_test.go; docs/inbound.md), then the official
# openai and @anthropic-ai/sdk Node clients (scripts/inbound-clients.sh).
# Everything talks to the scripted model on loopback: no network access and
# no API key are needed once the pinned clients are installed.
#
# Usage: scripts/e2e-clients.sh [go test flags...]
#
# Environment:
#   HARNESSFLOW_CLAUDE, HARNESSFLOW_OPENCODE  binaries to use as they are
#                                            (skip the install)
#   CLIENTS_DIR  where the pinned clients are installed with npm
#                (default: $HOME/.cache/harnessflow-clients)
set -euo pipefail

CLAUDE_VERSION=2.1.332
OPENCODE_VERSION=1.18.33
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${CLIENTS_DIR:-$HOME/.cache/harnessflow-clients}"

# install PACKAGE VERSION BIN: the pinned package into $dir/BIN unless it
# is there already; prints the binary's path.
install() {
  local pkg=$1 version=$2 bin=$3 prefix="$dir/$3"
  if [ ! -f "$prefix/.version" ] || [ "$(cat "$prefix/.version")" != "$pkg@$version" ] || [ ! -x "$prefix/node_modules/.bin/$bin" ]; then
    if ! command -v npm >/dev/null; then
      echo "e2e-clients: npm (Node.js) is needed to install $pkg@$version" >&2
      exit 1
    fi
    echo "e2e-clients: installing $pkg@$version into $prefix" >&2
    rm -rf "$prefix" && mkdir -p "$prefix"
    npm install --prefix "$prefix" --save-exact --no-audit --no-fund "$pkg@$version" >&2
    echo "$pkg@$version" > "$prefix/.version"
  fi
  echo "$prefix/node_modules/.bin/$bin"
}

HARNESSFLOW_CLAUDE="${HARNESSFLOW_CLAUDE:-$(install @anthropic-ai/claude-code "$CLAUDE_VERSION" claude)}"
HARNESSFLOW_OPENCODE="${HARNESSFLOW_OPENCODE:-$(install opencode-ai "$OPENCODE_VERSION" opencode)}"

# opencode searches files with ripgrep and would download it: use one on
# this machine (the one Codex bundles will do).
if ! command -v rg >/dev/null 2>&1; then
  rg="$(find "${CODEX_DIR:-$HOME/.cache/harnessflow-codex}" -name rg -type f -perm -u+x 2>/dev/null | head -1 || true)"
  if [ -n "$rg" ]; then
    PATH="$PATH:$(dirname "$rg")"
  else
    echo "e2e-clients: installing ripgrep (apt-get) for opencode" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep >/dev/null; } ||
      echo "e2e-clients: ripgrep could not be installed; opencode may try to download it" >&2
  fi
fi

cd "$root"
echo "e2e-clients: Claude Code $("$HARNESSFLOW_CLAUDE" --version 2>/dev/null | head -1), opencode $("$HARNESSFLOW_OPENCODE" --version 2>/dev/null | head -1)" >&2
HARNESSFLOW_CLAUDE="$HARNESSFLOW_CLAUDE" HARNESSFLOW_OPENCODE="$HARNESSFLOW_OPENCODE" PATH="$PATH" \
  go test ./e2e -run 'TestClaudeCodeInbound|TestOpencodeInbound' -v -count=1 "$@"
bash scripts/inbound-clients.sh
