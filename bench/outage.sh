#!/usr/bin/env bash
# An outage of vPIC (issue 17's benchmark): new VINs arrive at RATE per
# second through one `vinctl batch` stream while the fake vPIC answers 503 to
# everything for OUTAGE seconds; then it recovers (a healthy fake on the
# same port) and the feed goes on for AFTER seconds. Prints the upstream
# requests during the outage (goal <= 50; about 6,600 without the breaker),
# the time from recovery to the breaker closed, and how the items ended.
#
# Usage: bench/outage.sh [OUTAGE] [AFTER] [RATE]   (default 60 20 100)
# Environment: BUILD (default build), SERVER_FLAGS (extra vin-server flags,
#   e.g. --breaker_failures=0 to compare without the breaker).
set -euo pipefail
cd "$(dirname "$0")/.."
outage=${1:-60}
after=${2:-20}
rate=${3:-100}
build=${BUILD:-build}
work=$(mktemp -d)
source tests/testing/procs.sh
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; stop_procs; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
vport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

"$build/fake-vpic" --port="$vport" --chaos=1*503 --log_requests >"$work/fake-down.log" 2>&1 &
down_pid=$!
pids+=("$down_pid")
vpic_url=$(await_line "$work/fake-down.log" 'listening on' | grep -oE 'http://[^ ]+')
# shellcheck disable=SC2086
start_server "$build/vin-server" "$work/server.log" --metrics_listen=127.0.0.1:0 --peak_hours=none ${SERVER_FLAGS:-}
mport=$(await_line "$work/server.log" 'metrics on' | sed -E 's/.*\(port ([0-9]+)\).*/\1/')
total=$(( (outage + after) * rate ))
python3 bench/gen_vins.py "$total" >"$work/vins.txt"  # a CSV, its header first
# The feed: RATE new VINs a second, on one stream, for the whole run.
python3 -c '
import sys, time
rate = float(sys.argv[1]); t0 = time.time()
for i, line in enumerate(open(sys.argv[2])):
    delay = t0 + i / rate - time.time()
    if delay > 0: time.sleep(delay)
    sys.stdout.write(line); sys.stdout.flush()
' "$rate" "$work/vins.txt" |
  "$build/vinctl" batch --server="127.0.0.1:$port" --out "$work/out.csv" \
    2>"$work/vinctl.err" &
feed_pid=$!
pids+=("$feed_pid")
sleep "$outage"
kill "$down_pid"; wait "$down_pid" 2>/dev/null || true
recovered=$(date +%s.%N)
"$build/fake-vpic" --port="$vport" --log_requests >"$work/fake-up.log" 2>&1 &
pids+=("$!")
await_line "$work/fake-up.log" 'listening on' >/dev/null
closed=""
while [ -z "$closed" ]; do
  state=$(curl -s "http://127.0.0.1:$mport/metrics" | awk '/^vin_upstream_breaker_state/ { print $2 }')
  if [ "$state" = "0" ]; then closed=$(date +%s.%N); break; fi
  if ! kill -0 "$feed_pid" 2>/dev/null; then break; fi
  sleep 0.05
done
wait "$feed_pid" || true
down_requests=$(grep -cE '^[0-9]{2}:[0-9]{2}:' "$work/fake-down.log" || true)
up_requests=$(grep -cE '^[0-9]{2}:[0-9]{2}:' "$work/fake-up.log" || true)
done_rows=$(grep -c ',done,' "$work/out.csv" || true)
failed_rows=$(grep -c ',failed,' "$work/out.csv" || true)
awk -v o="$outage" -v r="$rate" -v d="$down_requests" -v u="$up_requests" \
    -v rec="$recovered" -v cl="${closed:-0}" -v dn="$done_rows" -v f="$failed_rows" 'BEGIN {
  printf "outage of %d s at %d new VINs/s: upstream requests during it %d (goal <= 50)\n", o, r, d
  if (cl > 0) printf "recovery to breaker closed: %.2f s; upstream requests after recovery %d\n", cl - rec, u
  else printf "the breaker did not close before the feed ended\n"
  printf "items: %d done, %d failed (retryable, with the time to the probe)\n", dn, f }'
