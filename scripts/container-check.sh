#!/usr/bin/env bash
# Builds the container image (Containerfile) with podman and checks it without
# starting a container (these machines cannot): the image's filesystem holds
# only the binary, the CA certificates and the passwd/group entries of a
# non-root user, its configuration runs that user with a HEALTHCHECK on
# /healthz, and the binary taken out of it answers --version, serves /healthz on
# a loopback port and passes its own HEALTHCHECK command — run inside the
# exported filesystem (chroot, as the image's user) when this script runs as
# root, else from it directly.
#
# Installs podman from Debian's packages when it is absent; when that is not
# possible it says so in one line and exits 0. Everything podman stores goes to
# a temporary directory (vfs driver, chroot isolation), removed at the end.
#
#   scripts/container-check.sh [--save FILE]   # --save: also write the image as a docker-archive
#                                              # (podman load -i FILE, docker load -i FILE)
set -euo pipefail
cd "$(dirname "$0")/.."

save=""
while [ $# -gt 0 ]; do
  case "$1" in
  --save) save="${2:?--save needs a FILE}"; shift 2 ;;
  *) echo "usage: scripts/container-check.sh [--save FILE]" >&2; exit 2 ;;
  esac
done

say() { echo "container-check: $*" >&2; }
die() { say "FAIL: $*"; exit 1; }

if ! command -v podman >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing podman from Debian's packages"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman >/dev/null; } >&2 || true
  fi
  if ! command -v podman >/dev/null 2>&1; then
    echo "container-check: skipping the container image check: podman is not installed and could not be installed with apt-get"
    exit 0
  fi
fi

t0=$(date +%s.%N)
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1fs", b - a }'; }

work=$(mktemp -d "${TMPDIR:-/tmp}/harnessflow-container.XXXXXX")
serve_pid=""
image=localhost/harnessflow:check
P=(podman --root "$work/storage" --runroot "$work/run" --storage-driver vfs)
cleanup() {
  if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; fi
  "${P[@]}" rm -f hf-check >/dev/null 2>&1 || true
  "${P[@]}" rmi -f "$image" >/dev/null 2>&1 || true
  # vfs layers can hold read-only files; make them removable first.
  chmod -R u+w "$work" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The build context: the static binary, the CA bundle, passwd and group.
ctx="$work/context"
mkdir -p "$ctx"
ca=/etc/ssl/certs/ca-certificates.crt
[ -s "$ca" ] || die "$ca is missing or empty (Debian: apt-get install ca-certificates)"
step=$(date +%s.%N)
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$ctx/harnessflow" ./cmd/harnessflow
go version -m "$ctx/harnessflow" | grep -q $'\tCGO_ENABLED=0$' || die "the binary was not built with CGO_ENABLED=0"
say "built the binary ($(du -k "$ctx/harnessflow" | cut -f1) KiB) in $(elapsed "$step")"
cp "$ca" "$ctx/ca-certificates.crt"
echo 'harnessflow:x:65532:65532:harnessflow:/nonexistent:/sbin/nologin' >"$ctx/passwd"
echo 'harnessflow:x:65532:' >"$ctx/group"

step=$(date +%s.%N)
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
"${P[@]}" build --quiet --format docker --isolation chroot --build-arg "REVISION=$revision" \
  -f Containerfile -t "$image" "$ctx" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; die "podman build failed"; }
say "podman build: $image in $(elapsed "$step")"

# The image's configuration.
cfg=$("${P[@]}" image inspect --format '{{.Config.User}}|{{json .Config.Entrypoint}}|{{json .Config.Cmd}}' "$image")
[ "$cfg" = '65532:65532|["/harnessflow"]|["serve","--listen","0.0.0.0:8787"]' ] ||
  die "image config: got user|entrypoint|cmd $cfg"
health=$("${P[@]}" image inspect --format '{{json .HealthCheck.Test}}' "$image" 2>/dev/null ||
  "${P[@]}" image inspect --format '{{json .Healthcheck.Test}}' "$image")
[ "$health" = '["CMD","/harnessflow","healthcheck","--url","http://127.0.0.1:8787/healthz","--timeout","4s"]' ] ||
  die "image HEALTHCHECK: got $health (built without --format docker?)"

# The image's filesystem, exported from a container that is created, never started.
"${P[@]}" create --name hf-check "$image" >/dev/null
"${P[@]}" export -o "$work/rootfs.tar" hf-check
got=$(tar -tvf "$work/rootfs.tar" | awk '{ printf "%s %s %s\n", $1, $2, $NF }' | sed 's|^\(\S* \S*\) \./|\1 |' | sort)
want=$(sort <<'EOF'
drwxr-xr-x 0/0 etc/
-r--r--r-- 0/0 etc/group
-r--r--r-- 0/0 etc/passwd
drwxr-xr-x 0/0 etc/ssl/
drwxr-xr-x 0/0 etc/ssl/certs/
-r--r--r-- 0/0 etc/ssl/certs/ca-certificates.crt
-r-xr-xr-x 0/0 harnessflow
EOF
)
[ "$got" = "$want" ] || die "the image's filesystem is not exactly the binary, the certificates and passwd/group:
$(diff <(echo "$want") <(echo "$got") || true)"
root="$work/rootfs"
mkdir -p "$root"
tar -xf "$work/rootfs.tar" -C "$root"
cmp -s "$root/harnessflow" "$ctx/harnessflow" || die "/harnessflow differs from the binary built"
cmp -s "$root/etc/ssl/certs/ca-certificates.crt" "$ca" || die "the image's CA bundle differs from $ca"
ncerts=$(grep -c 'BEGIN CERTIFICATE' "$root/etc/ssl/certs/ca-certificates.crt")
[ "$ncerts" -gt 0 ] || die "the image's CA bundle holds no certificate"
awk -F: '$3 == 0 || $4 == 0 { bad = 1 } END { exit bad }' "$root/etc/passwd" || die "/etc/passwd has a root entry"
[ "$(cut -d: -f1,3,4 "$root/etc/passwd")" = harnessflow:65532:65532 ] || die "/etc/passwd: want only harnessflow:65532:65532"
say "image filesystem: /harnessflow, /etc/ssl/certs/ca-certificates.crt ($ncerts certificates), /etc/passwd and /etc/group (harnessflow, 65532), nothing else"

# Run the exported binary as the image would: its filesystem as /, its user,
# the image's environment only. Without root, from the export directly.
if [ "$(id -u)" = 0 ] && command -v chroot >/dev/null 2>&1; then
  in_image=(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/nonexistent
    "$(command -v chroot)" --userspec=65532:65532 "$root" /harnessflow)
  how="chroot into the export as 65532:65532"
else
  in_image=(env -i HOME=/nonexistent "$root/harnessflow")
  how="run from the export (not root: no chroot)"
fi
version=$("${in_image[@]}" --version) || die "/harnessflow --version failed"
case "$version" in harnessflow\ *) ;; *) die "/harnessflow --version printed $version" ;; esac

"${in_image[@]}" serve --listen 127.0.0.1:0 >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
addr=""
for _ in $(seq 100); do
  addr=$(sed -n 's|^harnessflow serve: listening on \(http://[^,]*\),.*|\1|p' "$work/serve.out")
  [ -n "$addr" ] && break
  kill -0 "$serve_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$addr" ] || { cat "$work/serve.out" "$work/serve.err" >&2; die "serve from the image did not start"; }
# The image's own HEALTHCHECK command, with the port serve picked.
probe=$("${in_image[@]}" healthcheck --url "$addr/healthz" --timeout 4s) ||
  die "the HEALTHCHECK command failed against $addr/healthz"
if command -v curl >/dev/null 2>&1; then
  body=$(curl -fsS --max-time 5 --noproxy '*' "$addr/healthz") || die "GET $addr/healthz failed"
  [ "$body" = ok ] || die "GET $addr/healthz answered $body, want ok"
fi
kill -TERM "$serve_pid"
status=0
wait "$serve_pid" || status=$?
serve_pid=""
[ "$status" = 0 ] || { cat "$work/serve.err" >&2; die "serve exited $status on SIGTERM, want 0"; }
say "binary ($how): $version; serve on $addr: $probe; SIGTERM: exit 0"

if [ -n "$save" ]; then
  "${P[@]}" save --quiet --format docker-archive -o "$save" "$image"
  say "saved the image to $save ($(du -k "$save" | cut -f1) KiB): podman load -i $save"
fi
say "ok in $(elapsed "$t0")"
