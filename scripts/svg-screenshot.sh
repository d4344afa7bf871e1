#!/usr/bin/env bash
# svg-screenshot.sh: render an SVG file (e.g. the chart of
# `harnessflow bench --svg FILE`) in headless Chromium and save a PNG, to
# check that browsers draw it as intended.
#
# Usage: scripts/svg-screenshot.sh FILE.svg [OUT.png] [WIDTHxHEIGHT]
#
# OUT.png defaults to /tmp/bench.png, the window to 1000x700 (the chart is
# 1000 pixels wide). Chromium runs with a throwaway profile, no network
# services, no sandbox (containers) and no GPU. Install it with
# `apt-get install -y chromium` when it is missing.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 3 ]; then
  echo "usage: $0 FILE.svg [OUT.png] [WIDTHxHEIGHT]" >&2
  exit 2
fi
svg="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
out="${2:-/tmp/bench.png}"
size="${3:-1000x700}"
if [ ! -f "$svg" ]; then
  echo "svg-screenshot: no such file: $1" >&2
  exit 2
fi

browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null; then
    browser="$b"
    break
  fi
done
if [ -z "$browser" ]; then
  echo "svg-screenshot: Chromium not found (apt-get install -y chromium)" >&2
  exit 1
fi

profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
rm -f "$out"
"$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --disable-sync --no-first-run \
  --user-data-dir="$profile" --screenshot="$out" --window-size="${size/x/,}" \
  "file://$svg" >/dev/null 2>&1 || true
if [ ! -s "$out" ]; then
  echo "svg-screenshot: Chromium wrote no screenshot" >&2
  exit 1
fi
echo "$out"
