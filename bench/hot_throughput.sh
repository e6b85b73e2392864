#!/usr/bin/env bash
# DecodeBatch throughput against its ceiling, in one run with one client:
# the ceiling is a bare callback-API server (bench/ceiling_server.cc) that
# answers each item with QUEUED and a DONE carrying a cache hit's vehicle,
# built and serialized per item; then vin-server in front of the fake vPIC.
# Prints items/s of both, their ratio, and the server's CPU and context
# switches (all its threads) per item. On the cold path (DISTINCT=ITEMS) it
# also runs the ceiling as the cold path's floor ("floor": each item decoded
# with one blocking GET to the same fake vPIC, inflated, parsed, encoded; see
# bench/ceiling_server.cc): what one vPIC request per item costs on this
# machine with no engine and no hand-off between threads; "floor-curl" is
# the same with the GET made by libcurl, as vin-server makes it.
#
# Usage: bench/hot_throughput.sh [ITEMS] [DISTINCT] [STREAMS] [WINDOW]
#   defaults: 100000 items over 100 distinct VINs (hot: cache hits and
#   joiners), 4 streams, window 256. DISTINCT=ITEMS measures the cold path
#   (every item a miss; the rate cap is off and the fake answers at once).
# Environment: BUILD (default build), SERVER_FLAGS (more vin-server flags).
set -euo pipefail
cd "$(dirname "$0")/.."
items=${1:-100000}
distinct=${2:-100}
streams=${3:-4}
window=${4:-256}
build=${BUILD:-build}
work=$(mktemp -d)
source tests/testing/procs.sh
ceiling_pid=
trap 'kill $ceiling_pid 2>/dev/null || true; stop_procs; rm -rf "$work"' EXIT

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# Context switches of all the process's threads (voluntary: a thread slept,
# waiting for another; involuntary: preempted): the cost of thread hand-offs.
switches() { cat /proc/"$1"/task/*/status | awk '/ctxt_switches/ { s += $2 } END { print s }'; }
hz=$(getconf CLK_TCK)

# run_client PID NAME: the client against 127.0.0.1:$port; prints a line.
run_client() {
  local pid=$1 name=$2 before after out cs_before cs_after
  before=$(ticks "$pid")
  cs_before=$(switches "$pid")
  out=$("$build/stream_client" --server="127.0.0.1:$port" --streams="$streams" \
    --items="$items" --distinct="$distinct" --window="$window" \
    --first_vin="$RANDOM$RANDOM")
  after=$(ticks "$pid")
  cs_after=$(switches "$pid")
  local rate
  rate=$(sed -E 's/.*items_per_s=([0-9]+).*/\1/' <<<"$out")
  awk -v n="$name" -v r="$rate" -v c="$((after - before))" -v hz="$hz" -v i="$items" \
    -v cs="$((cs_after - cs_before))" \
    'BEGIN { printf "%-10s %8d items/s  server CPU %.1f us/item  %.2f context switches/item\n", n, r, c / hz / i * 1e6, cs / i }'
  echo "$rate" >"$work/$name.rate"
}

# run_ceiling NAME [flags...]: the ceiling server with `flags`, measured.
run_ceiling() {
  local name=$1
  shift
  "$build/ceiling_server" --listen=127.0.0.1:0 "$@" >"$work/ceiling.log" 2>&1 &
  ceiling_pid=$!
  port=$(await_line "$work/ceiling.log" 'listening on' | sed -E 's/.*\(port ([0-9]+)\).*/\1/')
  run_client "$ceiling_pid" "$name"
  kill "$ceiling_pid"; wait "$ceiling_pid" 2>/dev/null || true; ceiling_pid=
}

echo "items=$items distinct=$distinct streams=$streams window=$window"
run_ceiling ceiling
start_fake "$build/fake-vpic" "$work/fake.log"
if [[ $distinct -ge $items ]]; then
  run_ceiling floor --vpic_base_url="$vpic_url"
  run_ceiling floor-curl --vpic_base_url="$vpic_url" --vpic_client=curl
fi
start_server "$build/vin-server" "$work/server.log" --upstream_rate=0 \
  --batch_window="$window" ${SERVER_FLAGS:-}
run_client "$server_pid" server
awk -v s="$(cat "$work/server.rate")" -v c="$(cat "$work/ceiling.rate")" \
  'BEGIN { printf "server/ceiling = %.2f\n", s / c }'
echo "server peak RSS $(awk '/VmHWM/ {print $2}' "/proc/$server_pid/status") kB"
