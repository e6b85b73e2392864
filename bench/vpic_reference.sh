#!/usr/bin/env bash
# vPIC's reference endpoints through the gateway (issue 31's benchmarks):
# 1. GetModelsForMake/honda answered from the cache and from the snapshot,
#    in JSON and in XML, with wrk (64 connections) next to nginx serving the
#    very same bytes as static files, in the same run: requests/s, p50, p99
#    and the ratio (goal >= 0.5x nginx each).
# 2. A year/make/model picker session from 100 clients at once against the
#    fake vPIC: GetAllMakes, GetModelsForMakeYear for 20 makes x 3 years and
#    DecodeVinValues for 20 VINs each (81 distinct URLs): upstream requests
#    (goal: one per distinct URL; the 20 VINs may travel in batches) and the
#    p99 latency.
#
# Usage: bench/vpic_reference.sh [SECONDS]   (default 10)
# Environment: BUILD (default build), SNAPSHOT (default .data/vpic.lite.db).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
build=${BUILD:-build}
snapshot=${SNAPSHOT:-.data/vpic.lite.db}
work=$(mktemp -d)
source tests/testing/procs.sh
nginx_pid=""
trap 'kill $nginx_pid 2>/dev/null || true; stop_procs; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

start_fake "$build/fake-vpic" "$work/fake.log" --log_requests
hport=$(free_port)
offline=()
[ -f "$snapshot" ] && offline=(--snapshot_path="$snapshot")
start_server "$build/vin-server" "$work/server.log" --http_listen=127.0.0.1:$hport \
  --upstream_rate=0 "${offline[@]}"
await_line "$work/server.log" 'HTTP gateway on' >/dev/null
base="http://127.0.0.1:$hport/api/vehicles"
models="/api/vehicles/GetModelsForMake/honda"

# The bytes each source answers, saved for nginx.
mkdir -p "$work/www" "$work/tmp"
for f in json xml; do
  curl -sf "$base/GetModelsForMake/honda?format=$f" -o "$work/www/cache.$f"
  if [ ${#offline[@]} -gt 0 ]; then
    curl -sf -H 'X-Vin-Source-Preference: snapshot_only' \
      "$base/GetModelsForMake/honda?format=$f" -o "$work/www/snapshot.$f"
  fi
done
nport=$(free_port)
start_nginx "$work" "$nport"
for f in "$work"/www/*.json "$work"/www/*.xml; do
  await_same "http://127.0.0.1:$nport/$(basename "$f")" "$f"
done

run_wrk() {  # URL LABEL [HEADER]
  local args=(-t2 -c64 -d"${secs}s" --latency)
  [ -n "${3:-}" ] && args+=(-H "$3")
  wrk "${args[@]}" "$1" >"$work/$2.wrk"
  check_wrk "$work/$2.wrk"
  awk '/Requests\/sec/ {print $2}' "$work/$2.wrk" >"$work/$2.rps"
  printf '  %-16s %10s req/s   p50 %8s   p99 %8s\n' "$2" "$(cat "$work/$2.rps")" \
    "$(awk '$1=="50%" {print $2}' "$work/$2.wrk")" "$(awk '$1=="99%" {print $2}' "$work/$2.wrk")"
}
ratio() {  # GATEWAY NGINX
  python3 -c "import sys; g=float(open(sys.argv[1]).read()); n=float(open(sys.argv[2]).read()); print(f'  gateway / nginx: {g/n:.2f}x (goal >= 0.5x)')" \
    "$work/$1.rps" "$work/$2.rps"
}
echo "GetModelsForMake/honda, wrk -t2 -c64 -d${secs}s, $(wc -c <"$work/www/cache.json") bytes of JSON:"
for f in json xml; do
  run_wrk "http://127.0.0.1:$nport/cache.$f" "nginx-cache.$f"
  run_wrk "http://127.0.0.1:$hport$models?format=$f" "cache.$f"
  ratio "cache.$f" "nginx-cache.$f"
  if [ ${#offline[@]} -gt 0 ]; then
    run_wrk "http://127.0.0.1:$nport/snapshot.$f" "nginx-snapshot.$f"
    run_wrk "http://127.0.0.1:$hport$models?format=$f" "snapshot.$f" \
      'X-Vin-Source-Preference: snapshot_only'
    ratio "snapshot.$f" "nginx-snapshot.$f"
  fi
done

# The picker session, on a server of its own (a cold cache).
kill "$nginx_pid"
wait "$nginx_pid" 2>/dev/null || true
nginx_pid=""
stop_procs
start_fake "$build/fake-vpic" "$work/fake2.log" --log_requests --latency=50ms
start_server "$build/vin-server" "$work/server2.log" --http_listen=127.0.0.1:$hport \
  --upstream_rate=0
await_line "$work/server2.log" 'HTTP gateway on' >/dev/null
python3 bench/gen_vins.py 20 | tail -n +2 | cut -d, -f2 >"$work/vins.txt"
grep -cE '^[0-9]{2}:[0-9]{2}:' "$work/fake2.log" >"$work/before" || true
python3 - "$base" "$work/vins.txt" <<'PY'
import concurrent.futures, sys, time, urllib.request
base, vins_file = sys.argv[1], sys.argv[2]
makes = ["honda", "toyota", "ford", "chevrolet", "nissan", "bmw", "audi", "kia",
         "hyundai", "subaru", "mazda", "volvo", "tesla", "jeep", "ram", "gmc",
         "lexus", "acura", "dodge", "buick"]
vins = open(vins_file).read().split()
urls = [f"{base}/GetAllMakes?format=json"]
urls += [f"{base}/GetModelsForMakeYear/make/{m}/modelyear/{y}?format=json"
         for m in makes for y in (2015, 2018, 2021)]
urls += [f"{base}/DecodeVinValues/{v}?format=json" for v in vins]

def session(_):
    took, bad = [], 0
    for u in urls:
        t = time.monotonic()
        with urllib.request.urlopen(u, timeout=60) as r:
            r.read()
            bad += r.status != 200
        took.append(time.monotonic() - t)
    return took, bad

t0 = time.monotonic()
with concurrent.futures.ThreadPoolExecutor(100) as pool:
    results = list(pool.map(session, range(100)))
elapsed = time.monotonic() - t0
lat = sorted(x for took, _ in results for x in took)
bad = sum(b for _, b in results)
p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000
print(f"picker: 100 clients x {len(urls)} requests ({len(urls)} distinct URLs) "
      f"in {elapsed:.1f} s, {bad} not 200; latency p50 {p(0.5):.1f} ms, "
      f"p99 {p(0.99):.1f} ms, max {lat[-1] * 1000:.1f} ms")
open(vins_file + ".distinct", "w").write(str(len(urls)))
PY
before=$(cat "$work/before")
grep -E '^[0-9]{2}:[0-9]{2}:' "$work/fake2.log" | tail -n +$((before + 1)) >"$work/picker.log" || true
awk -v d="$(cat "$work/vins.txt.distinct")" '
  / batch=/ { b++; sub(/.* batch=/, ""); sub(/ .*/, ""); v += split($0, a, ";"); next }
  / vin=-/ { r++; next }
  / vin=/ { s++; v++ }
  END { printf "picker upstream: %d reference requests (61 distinct), %d single + %d batch decode requests carrying %d VINs (20 distinct); %d requests for %d distinct URLs (goal: one per URL, fewer with batching)\n", r, s, b, v, r + s + b, d }' "$work/picker.log"
