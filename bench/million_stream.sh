#!/usr/bin/env bash
# Peak memory of one long cold stream: ITEMS items over as many distinct VINs
# (every item a miss) through one DecodeBatch stream, with the default cache
# (--cache_capacity 100,000 entries), against a fake vPIC whose answers are
# full vPIC results (--full_answers: every variable the fixtures fill, as in
# ../shared/fixtures/vpic/decode-vin.json, has a value). The rate cap is off so the run takes minutes,
# not days. Prints items/s, the server's peak RSS (VmHWM) and the cache's
# entries, next to the 256 MB the issue allows.
#
# Usage: bench/million_stream.sh [ITEMS] [WINDOW]
#   ITEMS   items (and distinct VINs) in the stream (default 1000000)
#   WINDOW  items in flight (default 256, vinctl's)
# Environment: BUILD (default build), SERVER_FLAGS (more vin-server flags).
set -euo pipefail
cd "$(dirname "$0")/.."
items=${1:-1000000}
window=${2:-256}
build=${BUILD:-build}
work=$(mktemp -d)
source tests/testing/procs.sh
trap 'stop_procs; rm -rf "$work"' EXIT

start_fake "$build/fake-vpic" "$work/fake.log" --full_answers
metrics_port=$((20000 + RANDOM % 20000))
start_server "$build/vin-server" "$work/server.log" --upstream_rate=0 \
  --metrics_listen="127.0.0.1:$metrics_port" ${SERVER_FLAGS:-}
echo "items=$items distinct=$items window=$window answers=full (every variable the fixtures fill)"
"$build/stream_client" --server="127.0.0.1:$port" --streams=1 \
  --items="$items" --distinct="$items" --window="$window" \
  --first_vin="$RANDOM$RANDOM"
entries=$(curl -s "http://127.0.0.1:$metrics_port/metrics" |
  awk '$1 == "vin_cache_entries" { print $2 }')
hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$server_pid/status")
rss=$(awk '/VmRSS/ { print $2 }' "/proc/$server_pid/status")
awk -v h="$hwm" -v r="$rss" -v e="${entries:-?}" 'BEGIN {
  printf "server peak RSS %.1f MB (limit 256 MB), RSS at the end %.1f MB, cache entries %s\n",
         h / 1024, r / 1024, e }'
