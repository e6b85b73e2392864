#!/usr/bin/env bash
# Cache hits through the HTTP gateway (issue 18's benchmark): wrk with 64
# connections over 100 VINs against GET /api/vehicles/DecodeVinValues/{vin},
# next to nginx serving the very same JSON bytes as static files, in the same
# run. Prints requests/s and latency percentiles of both, and the ratio
# (goal >= 0.5x nginx). Then a cold batch through the gateway: distinct VINs
# posted to DecodeVINValuesBatch, and the upstream requests per distinct VIN
# (goal 1.0) with the VINs per upstream request.
#
# Usage: bench/http_hits.sh [SECONDS] [COLD_VINS]   (default 10 2000)
# Environment: BUILD (default build), SERVER_FLAGS (extra vin-server flags).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
cold=${2:-2000}
build=${BUILD:-build}
work=$(mktemp -d)
source tests/testing/procs.sh
nginx_pid=""
trap 'kill $nginx_pid 2>/dev/null || true; stop_procs; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

start_fake "$build/fake-vpic" "$work/fake.log" --log_requests
hport=$(free_port)
# shellcheck disable=SC2086
start_server "$build/vin-server" "$work/server.log" --http_listen=127.0.0.1:$hport \
  --metrics_listen=127.0.0.1:0 --upstream_rate=0 ${SERVER_FLAGS:-}
await_line "$work/server.log" 'HTTP gateway on' >/dev/null

# 100 VINs, decoded once (the fake answers), then cache hits; the same bytes
# saved for nginx.
python3 bench/gen_vins.py 100 | tail -n +2 | cut -d, -f2 >"$work/vins.txt"
mkdir -p "$work/www/api/vehicles/DecodeVinValues"
while read -r vin; do
  curl -sf "http://127.0.0.1:$hport/api/vehicles/DecodeVinValues/$vin" \
    -o "$work/www/api/vehicles/DecodeVinValues/$vin"
done <"$work/vins.txt"
{
  echo 'local paths = {'
  while read -r vin; do echo "  \"/api/vehicles/DecodeVinValues/$vin\","; done <"$work/vins.txt"
  echo '}'
  echo 'local i = 0'
  echo 'request = function() i = i % #paths + 1; return wrk.format("GET", paths[i]) end'
} >"$work/paths.lua"

nport=$(free_port)
start_nginx "$work" "$nport"
first=$(head -1 "$work/vins.txt")
await_same "http://127.0.0.1:$nport/api/vehicles/DecodeVinValues/$first" \
  "$work/www/api/vehicles/DecodeVinValues/$first"

run_wrk() {  # URL LABEL
  wrk -t2 -c64 -d"${secs}s" --latency -s "$work/paths.lua" "$1" >"$work/$2.wrk"
  check_wrk "$work/$2.wrk"
  local rps p50 p99
  rps=$(awk '/Requests\/sec/ {print $2}' "$work/$2.wrk")
  p50=$(awk '$1=="50%" {print $2}' "$work/$2.wrk")
  p99=$(awk '$1=="99%" {print $2}' "$work/$2.wrk")
  printf '%-8s %10s req/s   p50 %8s   p99 %8s\n' "$2" "$rps" "$p50" "$p99"
  echo "$rps" >"$work/$2.rps"
}
echo "cache hits, wrk -t2 -c64 -d${secs}s over 100 VINs:"
run_wrk "http://127.0.0.1:$nport" nginx
run_wrk "http://127.0.0.1:$hport" gateway
python3 -c "import sys; g=float(open(sys.argv[1]).read()); n=float(open(sys.argv[2]).read()); print(f'gateway / nginx: {g/n:.2f}x (goal >= 0.5x)')" \
  "$work/gateway.rps" "$work/nginx.rps"

# The cold batch: distinct VINs, 50 a request, 8 requests at a time.
grep -E '^[0-9]{2}:[0-9]{2}:' "$work/fake.log" >"$work/before.log" || true
python3 bench/gen_vins.py $((cold + 100)) | tail -n +2 | cut -d, -f2 | tail -n "$cold" >"$work/cold.txt"
split -l 50 "$work/cold.txt" "$work/chunk."
t0=$(date +%s.%N)
ls "$work"/chunk.* | xargs -P 8 -I{} sh -c \
  "curl -sf -X POST 'http://127.0.0.1:$hport/api/vehicles/DecodeVINValuesBatch/' --data \"format=json&data=\$(paste -sd';' {})\" -o {}.out"
t1=$(date +%s.%N)
grep -E '^[0-9]{2}:[0-9]{2}:' "$work/fake.log" | tail -n +$(( $(wc -l <"$work/before.log") + 1 )) >"$work/cold.log" || true
requests=$(wc -l <"$work/cold.log")
vins=$(awk '/ batch=/ { sub(/.* batch=/, ""); sub(/ .*/, ""); n += split($0, a, ";"); next }
            / vin=/ { n++ } END { print n + 0 }' "$work/cold.log")
answered=$(python3 -c 'import glob, json, sys; print(sum(json.load(open(f))["Count"] for f in glob.glob(sys.argv[1])))' "$work/chunk.*.out")
awk -v c="$cold" -v r="$requests" -v v="$vins" -v a="$answered" -v s="$t0" -v e="$t1" 'BEGIN {
  printf "cold batch: %d distinct VINs in %.2f s, %d answered; upstream: %d requests carrying %d VINs = %.2f per distinct VIN (goal 1.0), %.1f VINs per request\n",
    c, e - s, a, r, v, v / c, (r ? v / r : 0) }'
