#!/usr/bin/env bash
# Bad day, offline (issue 17's benchmark): a feed of N distinct VINs through
# `vinctl batch` against a server with the serve defaults and the snapshot
# (LIVE_THEN_SNAPSHOT), whose vPIC address answers nothing (a loopback port
# where nothing listens), next to the same feed on a server answering
# SNAPSHOT_ONLY, in the same run. Prints both rates, their ratio (goal:
# >= 0.8) and the upstream requests of the offline run (goal: <=
# --breaker_failures + the concurrency + the probes).
#
# Usage: bench/offline_feed.sh [ITEMS]   (default 50000)
# Environment: BUILD (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
items=${1:-50000}
build=${BUILD:-build}
work=$(mktemp -d)
source tests/testing/procs.sh
trap 'stop_procs; rm -rf "$work"' EXIT
[ -f .data/vpic.lite.db ] || { echo "needs .data/vpic.lite.db (scripts/fetch_snapshot.sh)" >&2; exit 1; }
python3 bench/gen_vins.py "$items" >"$work/feed.csv"
# A port where nothing listens.
dead=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
vpic_url="http://127.0.0.1:$dead/api/vehicles"

run() {  # NAME [server flags...]: prints "seconds requests"
  local name=$1
  shift
  start_server "$build/vin-server" "$work/server-$name.log" \
    --snapshot_path=.data/vpic.lite.db --metrics_listen=127.0.0.1:0 --peak_hours=none "$@"
  local mport
  mport=$(await_line "$work/server-$name.log" 'metrics on' | sed -E 's/.*\(port ([0-9]+)\).*/\1/')
  local t0 t1
  t0=$(date +%s.%N)
  "$build/vinctl" batch --server="127.0.0.1:$port" --in "$work/feed.csv" \
    --out "$work/out-$name.csv" 2>"$work/vinctl-$name.err" || true
  t1=$(date +%s.%N)
  local requests
  requests=$(curl -s "http://127.0.0.1:$mport/metrics" |
    awk '/^vin_upstream_requests_total/ { n += $2 } END { print n + 0 }')
  local done_rows
  done_rows=$(grep -c ',done,' "$work/out-$name.csv" || true)
  stop_procs
  echo "$t0 $t1 $requests $done_rows"
}

read -r a0 a1 areq adone < <(run offline)
read -r b0 b1 breq bdone < <(run snapshot_only --source_preference=snapshot_only)
awk -v n="$items" -v a0="$a0" -v a1="$a1" -v ar="$areq" -v ad="$adone" \
    -v b0="$b0" -v b1="$b1" -v br="$breq" -v bd="$bdone" 'BEGIN {
  ra = n / (a1 - a0); rb = n / (b1 - b0);
  printf "offline (vPIC unreachable, LIVE_THEN_SNAPSHOT): %d VINs in %.2f s = %.0f VINs/s, done %d, upstream requests %d\n", n, a1 - a0, ra, ad, ar
  printf "snapshot_only:                                  %d VINs in %.2f s = %.0f VINs/s, done %d, upstream requests %d\n", n, b1 - b0, rb, bd, br
  printf "ratio offline / snapshot_only: %.2f (goal >= 0.8)\n", ra / rb }'
