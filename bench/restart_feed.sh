#!/usr/bin/env bash
# Restart (issue 17's benchmark): a feed of N distinct VINs through
# `vinctl batch` against a server with --cache_path; the same feed again on
# the same server (an in-memory hot run); then a restart (SIGTERM, start
# again over the same file) and the same feed a third time. Prints the
# upstream requests of each run (goal for the run after the restart: 0) and
# its items/s next to the hot run's.
#
# Usage: bench/restart_feed.sh [ITEMS]   (default 100000)
# Environment: BUILD (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
items=${1:-100000}
build=${BUILD:-build}
work=$(mktemp -d)
source tests/testing/procs.sh
trap 'stop_procs; rm -rf "$work"' EXIT
python3 bench/gen_vins.py "$items" >"$work/feed.csv"
start_fake "$build/fake-vpic" "$work/fake.log" --log_requests
fake_requests() { grep -cE '^[0-9]{2}:[0-9]{2}:' "$work/fake.log" || true; }

feed() {  # NAME: prints "seconds"
  local t0 t1
  t0=$(date +%s.%N)
  "$build/vinctl" batch --server="127.0.0.1:$port" --in "$work/feed.csv" \
    --out "$work/out-$1.csv" 2>"$work/vinctl-$1.err" || true
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
serve() {
  "$build/vin-server" --listen=127.0.0.1:0 --vpic_base_url="$vpic_url" \
    --cache_path="$work/cache.db" --upstream_rate=0 "$@" >>"$work/server.log" 2>&1 &
  server_pid=$!
  port=$(await_line "$work/server.log" "listening on.*" | tail -1 | sed -E 's/.*\(port ([0-9]+)[,)].*/\1/')
}

serve
r0=$(fake_requests); cold=$(feed cold); r1=$(fake_requests)
hot=$(feed hot); r2=$(fake_requests)
kill -TERM "$server_pid"; wait "$server_pid" || true
: >"$work/server.log"
serve
again=$(feed restarted); r3=$(fake_requests)
awk -v n="$items" -v c="$cold" -v h="$hot" -v a="$again" \
    -v c_r=$((r1 - r0)) -v h_r=$((r2 - r1)) -v a_r=$((r3 - r2)) 'BEGIN {
  printf "cold feed:           %d VINs in %.2f s = %.0f/s, upstream requests %d\n", n, c, n / c, c_r
  printf "hot (same process):  %d VINs in %.2f s = %.0f/s, upstream requests %d\n", n, h, n / h, h_r
  printf "after a restart:     %d VINs in %.2f s = %.0f/s, upstream requests %d (goal 0), %.2fx the hot rate\n", n, a, n / a, a_r, (n / a) / (n / h) }'
