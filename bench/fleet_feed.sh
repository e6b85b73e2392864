#!/usr/bin/env bash
# A dealer feed through a fleet: ROWS rows over DISTINCT VINs (repeats
# cycle), streamed with `vinctl batch` through 1 replica, then through 3
# replicas sharing one redis-server (the feed split round-robin, one vinctl
# per replica, all at once), in front of the fake vPIC. Prints, for each:
# wall time, items/s, upstream requests per distinct VIN (1.00 is one
# request per VIN across the fleet), and Redis commands the replicas sent
# per item (each a round trip, pipelined; commands inside a Lua script are
# not counted).
#
# Usage: bench/fleet_feed.sh [ROWS] [DISTINCT]   (default 100000 20000)
# Environment: BUILD (default build), FAKE_LATENCY (default 5ms: the fleet's
# overhead, not vPIC's latency, is measured), REPLICAS (default "1 3").
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-100000}
distinct=${2:-20000}
build=${BUILD:-build}
latency=${FAKE_LATENCY:-5ms}
fleets=${REPLICAS:-"1 3"}
work=$(mktemp -d)
source tests/testing/procs.sh
redis_pid=
pids=()
cleanup() {
  kill "${pids[@]}" "$redis_pid" 2>/dev/null || true
  stop_procs
  rm -rf "$work"
}
trap cleanup EXIT

python3 bench/gen_vins.py "$rows" --distinct "$distinct" >"$work/feed.csv"
redis_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# Redis commands the replicas sent (their vin_redis_commands_total).
commands() {
  local total=0 p
  for p in "${metrics_ports[@]}"; do
    total=$((total + $(curl -s "http://127.0.0.1:$p/metrics" |
      awk '$1 == "vin_redis_commands_total" { printf "%d", $2 }')))
  done
  echo "$total"
}

printf '%-9s %9s %10s %22s %18s\n' replicas seconds items/s "requests/distinct VIN" "redis cmds/item"
for n in $fleets; do
  redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no \
    --loglevel warning >"$work/redis.log" 2>&1 &
  redis_pid=$!
  for _ in $(seq 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  start_fake "$build/fake-vpic" "$work/fake-$n.log" --latency="$latency" --log_requests
  ports=()
  metrics_ports=()
  pids=()
  for i in $(seq 1 "$n"); do
    "$build/vin-server" --listen=127.0.0.1:0 --vpic_base_url="$vpic_url" \
      --redis_url="redis://127.0.0.1:$redis_port" --fleet_size_hint="$n" \
      --upstream_rate=0 --upstream_batch_max=1 --max_upstream_concurrency=32 \
      --metrics_listen=127.0.0.1:0 >"$work/server-$n-$i.log" 2>&1 &
    pids+=($!)
    ports+=("$(await_line "$work/server-$n-$i.log" 'listening on' |
      sed -E 's/.*\(port ([0-9]+)[,)].*/\1/')")
    metrics_ports+=("$(await_line "$work/server-$n-$i.log" 'metrics on' |
      sed -E 's/.*\(port ([0-9]+)\).*/\1/')")
  done
  # The feed split round-robin over the replicas: a VIN's repeats land on
  # different replicas.
  head -1 "$work/feed.csv" >"$work/header"
  for i in $(seq 1 "$n"); do
    { cat "$work/header"; tail -n +2 "$work/feed.csv" |
        awk -v n="$n" -v i="$i" '(NR - 1) % n == i - 1'; } >"$work/part-$n-$i.csv"
  done
  before=$(commands)
  t0=$(date +%s.%N)
  feeders=()
  for i in $(seq 1 "$n"); do
    "$build/vinctl" batch --server="127.0.0.1:${ports[$((i - 1))]}" \
      --in "$work/part-$n-$i.csv" --out "$work/out-$n-$i.csv" \
      2>"$work/vinctl-$n-$i.err" &
    feeders+=($!)
  done
  for p in "${feeders[@]}"; do wait "$p" || echo "vinctl failed: $(tail -1 "$work"/vinctl-$n-*.err)" >&2; done
  t1=$(date +%s.%N)
  after=$(commands)
  done_rows=$(cat "$work"/out-$n-*.csv | grep -c ',done,' || true)
  requests=$(grep -cE '^[0-9]{2}:[0-9]{2}:' "$work/fake-$n.log" || true)
  kill "${pids[@]}" "$redis_pid" 2>/dev/null || true
  pids=()
  redis_pid=
  stop_procs  # waits for every child
  [ "$done_rows" -eq "$rows" ] || echo "only $done_rows of $rows rows done" >&2
  awk -v n="$n" -v s="$t0" -v e="$t1" -v rows="$rows" -v d="$distinct" \
      -v r="$requests" -v c="$((after - before))" 'BEGIN {
    t = e - s
    printf "%-9d %9.1f %10.0f %22.2f %18.2f\n", n, t, rows / t, r / d, c / rows
  }'
done
