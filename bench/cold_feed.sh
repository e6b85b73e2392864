#!/usr/bin/env bash
# A cold dealer feed under the upstream rate cap: N distinct VINs (none
# cached) through `vinctl batch` against the fake vPIC, with batching on
# (--upstream_batch_max=50) and off (1). Prints, for each: wall time, VINs per
# minute, upstream requests, VINs they carried, and the most requests the
# fake saw in any one second.
#
# Usage: bench/cold_feed.sh [ITEMS] [RATE]
#   ITEMS  distinct VINs in the feed (default 10000)
#   RATE   the server's --upstream_rate, requests per minute (default 1000)
# Environment: BUILD (default build), MODES (default "50 1": the batch sizes
# to run; with batching off a 10,000-VIN feed takes ITEMS/RATE minutes),
# FAKE_LATENCY (added to every fake answer, default 150ms: vPIC's usual).
set -euo pipefail
cd "$(dirname "$0")/.."
items=${1:-10000}
rate=${2:-1000}
build=${BUILD:-build}
modes=${MODES:-"50 1"}
latency=${FAKE_LATENCY:-150ms}
work=$(mktemp -d)
source tests/testing/procs.sh
trap 'stop_procs; rm -rf "$work"' EXIT

python3 bench/gen_vins.py "$items" >"$work/feed.csv"

# Seconds since midnight from the fake's "HH:MM:SS.micros" request times.
peak_per_second() {
  awk '{ split($1, t, ":"); print t[1] * 3600 + t[2] * 60 + t[3] }' "$1" |
    sort -n |
    awk '{ ts[NR] = $1 } END {
      best = 0; j = 1
      for (i = 1; i <= NR; i++) {
        while (ts[i] - ts[j] >= 1) j++
        if (i - j + 1 > best) best = i - j + 1
      }
      print best
    }'
}

for batch in $modes; do
  start_fake "$build/fake-vpic" "$work/fake-$batch.log" --latency="$latency" \
    --log_requests
  start_server "$build/vin-server" "$work/server-$batch.log" \
    --upstream_rate="$rate" --upstream_batch_max="$batch" --cache_capacity=0 --peak_hours=none
  t0=$(date +%s.%N)
  set +e
  "$build/vinctl" batch --server="127.0.0.1:$port" --in "$work/feed.csv" \
    --out "$work/out-$batch.csv" 2>"$work/vinctl-$batch.err"
  rc=$?
  set -e
  t1=$(date +%s.%N)
  stop_procs
  grep -E '^[0-9]{2}:[0-9]{2}:' "$work/fake-$batch.log" >"$work/requests-$batch.log" || true
  requests=$(wc -l <"$work/requests-$batch.log")
  vins=$(awk '/ batch=/ { sub(/.* batch=/, ""); sub(/ .*/, ""); n += split($0, a, ";"); next }
              / vin=/ { n++ } END { print n + 0 }' "$work/requests-$batch.log")
  done_rows=$(grep -c ',done,' "$work/out-$batch.csv" || true)
  peak=$(peak_per_second "$work/requests-$batch.log")
  awk -v b="$batch" -v s="$t0" -v e="$t1" -v n="$items" -v r="$requests" \
      -v v="$vins" -v p="$peak" -v d="$done_rows" -v rc="$rc" -v rate="$rate" \
    'BEGIN { w = e - s;
      printf "upstream_batch_max=%s rate=%s/min: %d VINs in %.1f s = %.0f VINs/min; " \
             "upstream requests %d carrying %d VINs; peak %d requests in one second; " \
             "done %d; vinctl exit %d\n", b, rate, n, w, n * 60 / w, r, v, p, d, rc }'
done
