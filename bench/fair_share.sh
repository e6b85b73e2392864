#!/usr/bin/env bash
# Rule 17's benchmark (issue 19): how long a person's unary Decode of a new
# VIN waits behind bulk feeds, with 0, 1, 8 and 32 cold vinctl batch streams
# (window 256 each) at --upstream_rate (default 600/min) against the fake
# vPIC. "before" sends the probes as PRIORITY_BULK of the feeds' tenant,
# which is the first-come order the service had; "after" sends them as they
# go now (interactive). Prints p50/p99/max of 20 probes, one every 0.5 s.
# Then the tenants' shares over time: tenant A with eight streams, tenant B
# with one, from vin_upstream_tenant_vins_total every 2 s.
#
# Usage: bench/fair_share.sh [RATE] [STREAM_COUNTS]   (default 600 "0 1 8 32")
# Environment: BUILD (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
rate=${1:-600}
counts=${2:-"0 1 8 32"}
build=${BUILD:-build}
work=$(mktemp -d)
source tests/testing/procs.sh
feeders=()
trap 'stop_feeds; stop_procs; rm -rf "$work"' EXIT
now_ms() { date +%s%3N; }

start_fake "$build/fake-vpic" "$work/fake.log"

start() {  # a fresh server: cold cache
  kill "${server_pid:-}" 2>/dev/null || true
  wait "${server_pid:-}" 2>/dev/null || true
  mport=$(free_port)
  start_server "$build/vin-server" "$work/server.log" --upstream_rate="$rate" \
    --peak_hours=none --metrics_listen=127.0.0.1:$mport
}

feed() {  # N TENANT SEED: N cold streams of 40,000 VINs
  local n=$1 tenant=$2 seed=$3
  for s in $(seq "$n"); do
    python3 bench/gen_vins.py 40000 --seed "$((seed * 100 + s))" >"$work/feed-$seed-$s.csv"
    "$build/vinctl" batch --server=127.0.0.1:$port --window 256 --tenant "$tenant" \
      --in "$work/feed-$seed-$s.csv" --out /dev/null 2>/dev/null &
    feeders+=($!)
  done
}

stop_feeds() {
  [ ${#feeders[@]} -gt 0 ] || return 0  # (a bare wait would wait for all)
  kill "${feeders[@]}" 2>/dev/null || true
  wait "${feeders[@]}" 2>/dev/null || true
  feeders=()
}

percentile() {  # P FILE
  sort -n "$2" | awk -v p="$1" '{a[NR]=$1} END {i=int((NR-1)*p/100+0.5)+1; print a[i]}'
}

echo "interactive wait behind bulk streams (rate $rate/min, batches of 50), 20 probes:"
printf '%-8s %-7s %9s %9s %9s\n' streams order p50_ms p99_ms max_ms
seed=1
for n in $counts; do
  for order in before after; do
    start
    feed "$n" feeds "$seed"
    sleep 3  # the backlog forms
    python3 bench/gen_vins.py 20 --seed "$((9000 + seed))" | tail -n +2 | cut -d, -f2 >"$work/probes.txt"
    : >"$work/lat.txt"
    probes=()
    while read -r vin; do
      (
        if [ "$order" = before ]; then args=(--priority bulk --tenant feeds); else args=(--tenant person); fi
        t0=$(now_ms)
        "$build/vinctl" decode --server=127.0.0.1:$port --deadline 300s "${args[@]}" "$vin" >/dev/null 2>&1 || true
        echo $(( $(now_ms) - t0 )) >>"$work/lat.txt"
      ) &
      probes+=($!)
      sleep 0.5
    done <"$work/probes.txt"
    wait "${probes[@]}"
    stop_feeds
    printf '%-8s %-7s %9s %9s %9s\n' "$n" "$order" "$(percentile 50 "$work/lat.txt")" \
      "$(percentile 99 "$work/lat.txt")" "$(sort -n "$work/lat.txt" | tail -1)"
    seed=$((seed + 1))
  done
done

echo
echo "tenants' shares of the VINs sent (A: 8 streams, B: 1 stream), every 2 s:"
start
feed 8 A 77
feed 1 B 78
vins() {  # TENANT: VINs sent for it so far
  curl -s "http://127.0.0.1:$mport/metrics" |
    awk -v t="$1" -F'[ ]' 'index($1, "vin_upstream_tenant_vins_total{tenant=\"" t "\"") == 1 {s += $2} END {print s + 0}'
}
pa=0
pb=0
printf '%-6s %8s %8s %8s\n' t_s A_vins B_vins A_share
for i in $(seq 10); do
  sleep 2
  a=$(vins A)
  b=$(vins B)
  da=$((a - pa))
  db=$((b - pb))
  pa=$a
  pb=$b
  printf '%-6s %8s %8s %8s\n' $((2 * i)) "$da" "$db" \
    "$(awk -v a="$da" -v b="$db" 'BEGIN {if (a + b > 0) printf "%.2f", a / (a + b); else print "-"}')"
done
stop_feeds
