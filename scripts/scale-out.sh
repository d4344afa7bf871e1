#!/usr/bin/env bash
# scale-out.sh: two harnessflow replicas behind nginx (round robin), sharing
# their response store in Redis, driven through nginx by a Go client
# (scripts/scale-out/client): previous_response_id chains whose turns land
# on alternating replicas, concurrent opencode conversations (one title
# request each, counted at the model servers), Redis outages (redis-server
# killed for 1 s and for 4 s and restarted, with every conversation
# streaming: each turn must be stored or fail retryably — the first outage
# failing none, being within the replicas' write retry of 3 s — and every
# stored response must be continued afterwards), and one replica killed
# with streams in flight. Everything listens on loopback; nothing needs the
# network once nginx and redis-server are installed. .ci/run runs it when
# E2E=1.
#
# Usage: scripts/scale-out.sh
#
# Installs nginx and redis-server with apt-get when they are missing (as
# root, or with sudo). Prints the client's summary and exits non-zero when a
# request was served wrongly or an expectation failed. KEEP=1 keeps the
# scratch directory (logs of every process) for a look afterwards.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

say() { echo "scale-out: $*" >&2; }

# --- packages ----------------------------------------------------------------
need=()
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v redis-server >/dev/null || need+=(redis-server)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  say "installing ${need[*]} with apt-get"
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >&2
fi
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
REDIS="$(command -v redis-server)"
# The packages start services of their own where systemd runs; ours listen
# on ports of their own and do not touch them.

# --- scratch directory, cleanup -----------------------------------------------
work="$(mktemp -d "${TMPDIR:-/tmp}/harnessflow-scale-out.XXXXXX")"
chmod 755 "$work" # nginx's workers may run as another user
pids=()
# start CMD...: runs CMD in the background, disowned (the shell reports
# nothing when the client kills a replica on purpose); its pid in $started.
start() {
  "$@" &
  started=$!
  disown "$started"
  pids+=("$started")
}
cleanup() {
  local status=$?
  # The client restarts redis-server in the outage phase and writes its pid.
  [ -f "$work/redis.pid" ] && pids+=("$(cat "$work/redis.pid")")
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for _ in $(seq 1 100); do # the processes are disowned: wait by polling
    alive=0
    for pid in "${pids[@]}"; do
      kill -0 "$pid" 2>/dev/null && alive=1
    done
    [ "$alive" = 0 ] && break
    sleep 0.05
  done
  if [ "${KEEP:-}" = 1 ] || [ "$status" != 0 ]; then
    say "logs kept in $work"
  else
    rm -rf "$work"
  fi
  exit "$status"
}
trap cleanup EXIT

# --- build ---------------------------------------------------------------------
say "building harnessflow and the client"
go build -o "$work/harnessflow" ./cmd/harnessflow
go build -o "$work/client" ./scripts/scale-out/client

# wait_url FILE: the first http://127.0.0.1:PORT a process printed to FILE.
wait_url() {
  local file=$1 pid=$2 url=""
  for _ in $(seq 1 200); do
    url="$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$file" 2>/dev/null | head -n 1 || true)"
    [ -n "$url" ] && { echo "$url"; return 0; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  say "no address from $file:"; cat "$file" "${file%.out}.err" >&2 2>/dev/null || true
  return 1
}

read -r redis_port nginx_port < <("$work/client" ports 2)

# --- redis-server ------------------------------------------------------------------
mkdir -p "$work/redis"
# Every write is on disk before Redis acknowledges it (appendfsync always), so
# the outage phase's SIGKILL loses nothing Redis acknowledged: a stored
# response that cannot be continued afterwards is the proxy's fault.
redis_cmd=("$REDIS" --port "$redis_port" --bind 127.0.0.1 --dir "$work/redis" --save "" --appendonly yes
  --appendfsync always --daemonize no --protected-mode yes --loglevel warning --logfile "$work/redis.log")
start "${redis_cmd[@]}"
redis_pid=$started
redis_url="redis://127.0.0.1:$redis_port/0?write_retry=3s"
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$redis_port") 2>/dev/null && break
  sleep 0.05
done
say "redis-server on 127.0.0.1:$redis_port"

# --- two replicas, each with its own scripted model server -------------------------
replicas=()
upstreams=()
for n in 1 2; do
  start "$work/client" upstream --script scripts/scale-out/script.json >"$work/up$n.out" 2>"$work/up$n.err"
  up_pid=$started
  up_url="$(wait_url "$work/up$n.out" "$up_pid")"
  upstreams+=("--upstream" "up$n=$up_url")

  start "$work/harnessflow" serve --listen 127.0.0.1:0 --upstream "$up_url/v1" --store "$redis_url" \
    --shutdown-grace 2s >"$work/r$n.out" 2>"$work/r$n.err"
  r_pid=$started
  r_url="$(wait_url "$work/r$n.out" "$r_pid")"
  replicas+=("--replica" "r$n=$r_url")
  eval "r${n}_pid=$r_pid r${n}_addr=${r_url#http://}"
  say "replica r$n on $r_url (pid $r_pid), its scripted model on $up_url"
done

# --- nginx ---------------------------------------------------------------------------
mkdir -p "$work/nginx"
chmod 755 "$work/nginx"
sed -e "s|@PREFIX@|$work/nginx|g" -e "s|@LISTEN@|127.0.0.1:$nginx_port|g" \
  -e "s|@REPLICA1@|$r1_addr|g" -e "s|@REPLICA2@|$r2_addr|g" \
  scripts/scale-out/nginx.conf >"$work/nginx/nginx.conf"
"$NGINX" -t -q -p "$work/nginx" -c "$work/nginx/nginx.conf"
start "$NGINX" -p "$work/nginx" -c "$work/nginx/nginx.conf" >"$work/nginx/stdout.log" 2>&1
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$nginx_port") 2>/dev/null && break
  sleep 0.05
done
say "nginx on 127.0.0.1:$nginx_port, round robin over $r1_addr and $r2_addr"

# --- drive -----------------------------------------------------------------------------
"$work/client" drive --lb "http://127.0.0.1:$nginx_port" "${replicas[@]}" "${upstreams[@]}" --kill "r2=$r2_pid" \
  --redis-pid "$redis_pid" --redis-addr "127.0.0.1:$redis_port" --redis-pidfile "$work/redis.pid" --redis-down 1s,4s --write-retry 3s \
  -- "${redis_cmd[@]}"
