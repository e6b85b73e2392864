#!/usr/bin/env bash
# A fleet on one machine, for demos: one redis-server and three vin-server
# replicas sharing it (cache, flights, NHTSA budget), on consecutive ports.
#
# Usage: scripts/fleet.sh [VPIC_BASE_URL] [extra vin-server flags...]
#   VPIC_BASE_URL defaults to the public vPIC API.
# Environment: FLEET_PORT (first replica's port, default 50061; the others
# follow), FLEET_REDIS_PORT (default 6390), FLEET_METRICS_PORT (first
# replica's metrics port, default 9471).
# Ctrl-C stops all of them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build >&2
vpic=${1:-https://vpic.nhtsa.dot.gov/api/vehicles}
shift || true
first=${FLEET_PORT:-50061}
redis_port=${FLEET_REDIS_PORT:-6390}
metrics=${FLEET_METRICS_PORT:-9471}
replicas=3

pids=()
stop() {
  trap - INT TERM EXIT
  kill -TERM "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap stop INT TERM EXIT

redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no \
  --loglevel warning &
pids+=($!)
for _ in $(seq 100); do
  redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break
  sleep 0.1
done

for i in $(seq 0 $((replicas - 1))); do
  build/vin-server --listen="127.0.0.1:$((first + i))" --vpic_base_url="$vpic" \
    --redis_url="redis://127.0.0.1:$redis_port" --fleet_size_hint=$replicas \
    --metrics_listen="127.0.0.1:$((metrics + i))" "$@" \
    > >(sed -u "s/^/[replica $i] /") 2>&1 &
  pids+=($!)
done
echo "fleet: redis on 127.0.0.1:$redis_port; replicas on 127.0.0.1:$first-$((first + replicas - 1)), metrics on :$metrics-$((metrics + replicas - 1)); Ctrl-C stops all" >&2
wait
