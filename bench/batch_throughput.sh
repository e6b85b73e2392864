#!/usr/bin/env bash
# Throughput of one DecodeBatch stream against the fake vPIC, and the
# server's peak memory. Runs fake-vpic, vin-server and `vinctl batch` as
# separate processes on loopback.
#
# Usage: bench/batch_throughput.sh [ITEMS] [DISTINCT] [FAKE_LATENCY]
#   ITEMS     rows in the feed (default 100000)
#   DISTINCT  distinct VINs among them (default = ITEMS)
#   FAKE_LATENCY  added to every fake vPIC answer (default 0ms)
# Environment: BUILD (default build), CONCURRENCY (server's
# --max_upstream_concurrency, default 8), WINDOW (vinctl --window, default 512),
# SOURCE (server's --source_preference, default live_only; snapshot_only
# decodes every item from .data/vpic.lite.db and never asks the fake),
# SERVER_FLAGS (more vin-server flags, e.g. --cache_capacity=0).
set -euo pipefail
cd "$(dirname "$0")/.."
items=${1:-100000}
distinct=${2:-$items}
latency=${3:-0ms}
build=${BUILD:-build}
concurrency=${CONCURRENCY:-8}
window=${WINDOW:-512}
source=${SOURCE:-live_only}
work=$(mktemp -d)
source tests/testing/procs.sh
trap 'stop_procs; rm -rf "$work"' EXIT

python3 bench/gen_vins.py "$items" --distinct "$distinct" >"$work/feed.csv"

start_fake "$build/fake-vpic" "$work/fake.log" --latency="$latency"
snapshot=()
[ "$source" = live_only ] || snapshot=(--snapshot_path=.data/vpic.lite.db)
start_server "$build/vin-server" "$work/server.log" \
  --max_upstream_concurrency="$concurrency" --source_preference="$source" --peak_hours=none \
  "${snapshot[@]}" ${SERVER_FLAGS:-}

rss_before=$(awk '/VmRSS/ {print $2}' "/proc/$server_pid/status")
start=$(date +%s.%N)
set +e
"$build/vinctl" batch --server="127.0.0.1:$port" --window="$window" \
  --in "$work/feed.csv" --out "$work/out.csv" 2>"$work/vinctl.err"
rc=$?
set -e
end=$(date +%s.%N)
peak=$(awk '/VmHWM/ {print $2}' "/proc/$server_pid/status")
rows=$(($(wc -l <"$work/out.csv") - 1))
done_rows=$(grep -c ',done,' "$work/out.csv" || true)
echo "items=$items distinct=$distinct fake_latency=$latency upstream_concurrency=$concurrency window=$window source=$source"
echo "vinctl exit=$rc output_rows=$rows done=$done_rows"
tail -1 "$work/vinctl.err"
awk -v s="$start" -v e="$end" -v n="$items" \
  'BEGIN { printf "elapsed=%.2fs throughput=%.0f items/s\n", e - s, n / (e - s) }'
echo "server_rss_before=${rss_before}kB server_peak_rss=${peak}kB"
