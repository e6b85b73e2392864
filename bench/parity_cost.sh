#!/usr/bin/env bash
# Rule 21's parity on the cold path: the server's CPU per decoded item with
# every live answer compared with the snapshot (--parity_sample=1) and with
# none compared (--parity_sample=0), in the same run, alternating, ROUNDS
# rounds each (goal: <= 5% more with parity). Each round starts a fresh
# server (an empty cache) in front of the fake vPIC and decodes ITEMS
# distinct VINs through `vinctl batch`; the CPU is the server process's
# user + system time from /proc, so it includes the comparisons' thread.
#
# Usage: bench/parity_cost.sh [ITEMS] [ROUNDS]   defaults 20000, 3.
# Environment: BUILD (default build). Needs .data/vpic.lite.db.
set -euo pipefail
cd "$(dirname "$0")/.."
items=${1:-20000}
rounds=${2:-3}
build=${BUILD:-build}
work=$(mktemp -d)
source tests/testing/procs.sh
trap 'stop_procs; rm -rf "$work"' EXIT
[ -f .data/vpic.lite.db ] || { echo "no .data/vpic.lite.db" >&2; exit 1; }

python3 bench/gen_vins.py "$items" --seed 5 > "$work/feed.csv"
start_fake "$build/fake-vpic" "$work/fake.log" --full_answers
tick=$(getconf CLK_TCK)
cpu_seconds() {  # utime + stime of $server_pid
  awk -v t="$tick" '{ print ($14 + $15) / t }' "/proc/$server_pid/stat"
}

run() {  # run SAMPLE: prints the server's CPU seconds for the feed
  start_server "$build/vin-server" "$work/server.log" --upstream_rate=0 \
    --snapshot_path=.data/vpic.lite.db --source_preference=live_only \
    --parity_sample="$1"
  await_line "$work/server.log" 'offline snapshot loaded' > /dev/null
  local before after
  before=$(cpu_seconds)
  "$build/vinctl" batch "--server=127.0.0.1:$port" --in="$work/feed.csv" \
    --out=/dev/null 2>/dev/null
  # The comparisons finish on their own thread: wait until its CPU settles.
  after=$(cpu_seconds)
  while :; do
    sleep 0.2
    local now
    now=$(cpu_seconds)
    [ "$now" = "$after" ] && break
    after=$now
  done
  kill "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  awk -v a="$before" -v b="$after" 'BEGIN { print b - a }'
}

on=()
off=()
for r in $(seq "$rounds"); do
  off+=("$(run 0)")
  on+=("$(run 1)")
  echo "round $r: parity off ${off[-1]} s, on ${on[-1]} s of server CPU for $items items"
done
printf '%s\n' "${off[@]}" | sort -n > "$work/off"
printf '%s\n' "${on[@]}" | sort -n > "$work/on"
awk -v n="$items" -v r="$rounds" 'NR == FNR { off[FNR] = $1; next } { on[FNR] = $1 }
  END {
    m = int((r + 1) / 2)
    printf "median server CPU per item: parity off %.1f us, on %.1f us: %+.1f%% (goal <= +5%%)\n",
           off[m] / n * 1e6, on[m] / n * 1e6, (on[m] / off[m] - 1) * 100 }' "$work/off" "$work/on"
