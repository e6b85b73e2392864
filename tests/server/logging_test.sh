#!/usr/bin/env bash
# The server's logs as an operator meets them, on the real binaries:
#  - an unknown --log_level or --log_format is a usage error (exit 2);
#  - --log_format=json writes one JSON object per line, and a decode's line
#    carries the VIN, waiters, attempts, outcome, latency, the tenant and
#    priority vinctl sent (--tenant, --priority) and its callers (peer and
#    request ids, a few, then a count);
#  - a stdout nobody reads never stalls decoding: lines are dropped and
#    counted (vin_log_dropped_total) instead, and the process still stops
#    cleanly.
# Usage: logging_test.sh VIN_SERVER FAKE_VPIC VINCTL
set -euo pipefail
server_bin=$1 fake_bin=$2 vinctl=$3
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
source "$(dirname "$0")/../testing/procs.sh"
cleanup() {
  stop_procs
  exec 3>&- 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  cat "$work"/sanitizer.* 2>/dev/null >&2 || true
  exit 1
}
# Sanitizer builds: reports go to files (not to a log nobody reads, where
# they would block), and the feed is shorter, the binaries being slower.
rows=${VIN_LOG_TEST_ROWS:-12000}
feed_timeout=${VIN_LOG_TEST_TIMEOUT:-120}
for v in TSAN_OPTIONS ASAN_OPTIONS UBSAN_OPTIONS; do
  [ -n "${!v:-}" ] && export "$v=${!v} log_path=$work/sanitizer"
done

# 1. Usage errors.
for flag in --log_level=loud --log_format=xml; do
  set +e
  "$server_bin" "$flag" >"$work/usage.out" 2>&1
  rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "$flag: exit $rc, want 2"
  grep -q -- "${flag%%=*} must be" "$work/usage.out" || fail "$flag: no clear error"
done
echo "usage errors: ok"

# 2. JSON lines.
start_fake "$fake_bin" "$work/fake.log"
start_server "$server_bin" "$work/server.log" --log_format=json
printf '%s\n' 1FTMW1T88MFA00001 1FTMW1T88MFA00001 1FTMW1T88MFA00001 \
  1FTMW1T88MFA00001 1FTMW1T88MFA00001 1HGCM82633A004352 |
  "$vinctl" batch --server="127.0.0.1:$port" --tenant=dealer-42 \
    --priority=interactive >"$work/out.csv" 2>/dev/null
kill -TERM "$server_pid"
wait "$server_pid" || fail "vin-server did not exit 0 on SIGTERM"
python3 - "$work/server.log" <<'PY' || fail "the JSON log is not what an operator needs"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]  # every line is JSON
assert all("time" in l and "level" in l and "msg" in l for l in lines), lines
decodes = [l for l in lines if l["msg"] == "decode"]
ford = [l for l in decodes if l["vin"] == "1FTMW1T88MFA00001"]
assert len(ford) == 1, decodes  # five rows, one flight
f = ford[0]
assert f["outcome"] == "done" and f["attempts"] == 1, f
# Who asked and how urgently (rule 17): vinctl's --tenant and --priority.
assert f["tenant"] == "dealer-42" and f["priority"] == "interactive", f
assert isinstance(f["latency_ms"], (int, float)), f
# The flight's callers: the first few rows' ids and the stream's peer; the
# rest as a count (rows that came after the flight was done are cache hits,
# not its callers).
callers = f["callers"]
assert 1 <= len(callers) <= 3, f
assert all(c["peer"].startswith("ipv4:127.0.0.1:") for c in callers), f
assert [c["request_id"] for c in callers] == [str(i) for i in range(len(callers))], f
assert f["waiters"] == len(callers) + f.get("more_callers", 0), f
print("json lines: ok (%d lines)" % len(lines))
PY

# 3. A stalled stdout. The log goes to a FIFO that this script holds open
# but reads only the first lines of: once its 64 KiB buffer is full, every
# write of the logger blocks.
mkfifo "$work/log.fifo"
exec 3<>"$work/log.fifo"
"$server_bin" --listen=127.0.0.1:0 --vpic_base_url="$vpic_url" \
  --metrics_listen=127.0.0.1:0 --upstream_rate=0 --log_level=debug \
  --log_queue_lines=1024 >"$work/log.fifo" 2>&1 &
server_pid=$!
for _ in 1 2 3; do
  IFS= read -r -t 20 line <&3 || fail "no start-up line"
  case "$line" in
    *"listening on"*) port=$(sed -E 's/.*\(port ([0-9]+)[,)].*/\1/' <<<"$line") ;;
    *"metrics on"*) metrics_port=$(sed -E 's/.*\(port ([0-9]+)\).*/\1/' <<<"$line") ;;
  esac
done
[ -n "${port:-}" ] && [ -n "${metrics_port:-}" ] || fail "no ports in the start-up lines"
python3 "$repo/bench/gen_vins.py" "$rows" >"$work/feed.csv"
start=$(date +%s)
timeout "$feed_timeout" "$vinctl" batch --server="127.0.0.1:$port" --in="$work/feed.csv" \
  --out="$work/out2.csv" 2>"$work/vinctl.err" ||
  fail "the feed did not finish while nobody read the log: $(tail -1 "$work/vinctl.err")"
done_rows=$(grep -c ',done,' "$work/out2.csv" || true)
[ "$done_rows" -eq "$rows" ] || fail "$done_rows of $rows rows done"
dropped=$(curl -s "http://127.0.0.1:$metrics_port/metrics" |
  awk '$1 == "vin_log_dropped_total" { print $2 }')
echo "stalled stdout: $rows rows done in $(( $(date +%s) - start )) s, $dropped log lines dropped"
awk -v d="${dropped:-0}" 'BEGIN { exit !(d > 0) }' || fail "no dropped lines counted"
# Still nobody reads: SIGTERM ends the process all the same, exit 0.
kill -TERM "$server_pid"
stopping=$(date +%s)
wait "$server_pid" || fail "vin-server did not exit 0 with its log stalled"
echo "stopped in $(( $(date +%s) - stopping )) s with its log stalled"
server_pid=
echo "logging: ok"
