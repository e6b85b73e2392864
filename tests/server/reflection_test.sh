#!/usr/bin/env bash
# What a person at a terminal does: list the services by reflection, check
# health and decode one VIN with `buf curl`, no proto files at hand.
# Usage: reflection_test.sh VIN_SERVER FAKE_VPIC BUF
set -euo pipefail
server_bin=$1 fake_bin=$2 buf=$3
work=$(mktemp -d)
cleanup() {
  kill "${server_pid:-}" "${fake_pid:-}" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Waits up to 20 s for a line matching $2 in file $1 and prints it.
await_line() {
  for _ in $(seq 200); do
    if line=$(grep -m1 -E "$2" "$1" 2>/dev/null); then echo "$line"; return 0; fi
    sleep 0.1
  done
  echo "timed out waiting for '$2' in $1:" >&2; cat "$1" >&2; return 1
}

"$fake_bin" --port=0 >"$work/fake.log" 2>&1 &
fake_pid=$!
vpic_url=$(await_line "$work/fake.log" 'listening on' | grep -oE 'http://[^ ]+')

"$server_bin" --listen=127.0.0.1:0 --vpic_base_url="$vpic_url" >"$work/server.log" 2>&1 &
server_pid=$!
port=$(await_line "$work/server.log" 'listening on' | sed -E 's/.*\(port ([0-9]+)\).*/\1/')
url="http://127.0.0.1:$port"
curl_args=(--protocol grpc --http2-prior-knowledge)

fail() { echo "FAIL: $*" >&2; exit 1; }

methods=$("$buf" curl "${curl_args[@]}" --list-methods "$url")
echo "$methods"
grep -qx 'vin.v1.VinDecoderService/Decode' <<<"$methods" || fail "Decode not listed"
grep -qx 'vin.v1.VinDecoderService/DecodeBatch' <<<"$methods" || fail "DecodeBatch not listed"
grep -qx 'grpc.health.v1.Health/Check' <<<"$methods" || fail "Health not listed"

health=$("$buf" curl "${curl_args[@]}" -d '{"service":"vin.v1.VinDecoderService"}' \
  "$url/grpc.health.v1.Health/Check")
echo "$health"
grep -q '"SERVING"' <<<"$health" || fail "health is not SERVING"

decoded=$("$buf" curl "${curl_args[@]}" -d '{"vin":"1FTMW1T88MFA00001"}' \
  "$url/vin.v1.VinDecoderService/Decode")
echo "$decoded"
grep -q '"make": "FORD"' <<<"$decoded" || fail "decode did not return FORD"
grep -q '"model": "F-150"' <<<"$decoded" || fail "decode did not return F-150"

set +e
invalid=$("$buf" curl "${curl_args[@]}" -d '{"vin":"1HGCM82643A004352"}' \
  "$url/vin.v1.VinDecoderService/Decode" 2>&1)
rc=$?
set -e
echo "$invalid"
[ "$rc" -ne 0 ] || fail "an invalid VIN was accepted"
grep -q 'invalid_argument' <<<"$invalid" || fail "invalid VIN is not INVALID_ARGUMENT"
grep -q 'check digit' <<<"$invalid" || fail "the error does not name the check digit"

# SIGTERM: clean exit 0.
kill -TERM "$server_pid"
wait "$server_pid"; rc=$?
server_pid=
[ "$rc" -eq 0 ] || fail "vin-server exited $rc on SIGTERM"
echo "reflection, health, decode and SIGTERM behave as a terminal user expects"
