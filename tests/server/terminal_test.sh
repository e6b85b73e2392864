#!/usr/bin/env bash
# What a person at a terminal does, as the README shows it: list the services
# by reflection, check health, decode and stream with `buf curl` (no proto
# files at hand), run a dealer feed through `vinctl batch`, stop the server.
# Usage: terminal_test.sh VIN_SERVER FAKE_VPIC BUF VINCTL
set -euo pipefail
server_bin=$1 fake_bin=$2 buf=$3 vinctl=$4
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
source "$(dirname "$0")/../testing/procs.sh"
trap 'stop_procs; rm -rf "$work"' EXIT

start_fake "$fake_bin" "$work/fake.log"
snapshot=()
if [ -f "$repo/.data/vpic.lite.db" ]; then
  snapshot=(--snapshot_path="$repo/.data/vpic.lite.db")
fi
start_server "$server_bin" "$work/server.log" "${snapshot[@]}"
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

# DecodeBatch streaming, as in the README.
streamed=$(printf '%s\n' '{"vin":"1FTMW1T88MFA00001","request_id":"stock-17"}' \
                          '{"vin":"1HGCM82643A004352"}' '{"vin":"1HGCM82633A004352"}' |
  "$buf" curl "${curl_args[@]}" -d @- "$url/vin.v1.VinDecoderService/DecodeBatch")
echo "$streamed"
[ "$(grep -c '"queued"' <<<"$streamed")" -eq 2 ] || fail "expected 2 queued events"
[ "$(grep -c '"done"' <<<"$streamed")" -eq 2 ] || fail "expected 2 done events"
grep -q '"FAILURE_REASON_INVALID_VIN"' <<<"$streamed" || fail "invalid item not failed"
grep -q '"requestId": "#1"' <<<"$streamed" || fail "default request id not #1"
grep -q '"requestId": "stock-17"' <<<"$streamed" || fail "request id not echoed"

# The README's dealer feed: every row answered in order, columns kept, the
# invalid VIN reported, exit status 1 because one row failed.
rc=0
feed=$("$vinctl" batch --server="127.0.0.1:$port" \
  --in="$repo/client/examples/inventory.csv" 2>"$work/vinctl.err") || rc=$?
echo "$feed"
cat "$work/vinctl.err"
[ "$rc" -eq 1 ] || fail "vinctl batch exited $rc, expected 1 (one row failed)"
[ "$(wc -l <<<"$feed")" -eq 6 ] || fail "expected a header and 5 rows"
[ "$(cut -c1-6 <<<"$feed" | tr '\n' ' ')" = "stock, A-1001 A-1002 A-1003 A-1004 A-1005 " ] ||
  fail "rows out of input order"
grep -qE '^A-1001,1FTMW1T88MFA00001,"41,990",Oxford White,done,(VPIC|CACHE),FORD,F-150,2021,' <<<"$feed" ||
  fail "row A-1001 not decoded with its columns kept"
grep -q '^A-1003,.*,failed,.*,INVALID_VIN,' <<<"$feed" || fail "row A-1003 not INVALID_VIN"

# SIGHUP reloads the snapshot without a restart (when one is loaded).
if [ ${#snapshot[@]} -gt 0 ]; then
  await_line "$work/server.log" 'offline snapshot loaded' >/dev/null
  kill -HUP "$server_pid"
  await_line "$work/server.log" 'SIGHUP received: reloading' >/dev/null
  for _ in $(seq 200); do
    [ "$(grep -c 'offline snapshot loaded' "$work/server.log")" -ge 2 ] && break
    sleep 0.1
  done
  [ "$(grep -c 'offline snapshot loaded' "$work/server.log")" -ge 2 ] ||
    fail "SIGHUP did not reload the snapshot"
  decoded=$("$buf" curl "${curl_args[@]}" \
    -d '{"vin":"1FTMW1T88MFA00001","source_preference":"SOURCE_PREFERENCE_SNAPSHOT_ONLY"}' \
    "$url/vin.v1.VinDecoderService/Decode")
  grep -q '"source": "SOURCE_SNAPSHOT"' <<<"$decoded" || fail "no snapshot answer after SIGHUP"
  grep -q '"model": "F-150"' <<<"$decoded" || fail "snapshot answer is not F-150"
fi

# SIGTERM: clean exit 0.
kill -TERM "$server_pid"
rc=0
wait "$server_pid" || rc=$?
server_pid=
[ "$rc" -eq 0 ] || fail "vin-server exited $rc on SIGTERM"

# Mutual TLS, as the README shows it, with certificates made here.
(
  cd "$work"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -days 2 -batch -subj /CN=test-ca -keyout ca.key -out ca.pem 2>/dev/null
  for who in server client; do
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -batch -subj "/CN=$who" -keyout "$who.key" -out "$who.csr" 2>/dev/null
  done
  printf 'subjectAltName=IP:127.0.0.1\n' >server.ext
  printf 'extendedKeyUsage=clientAuth\n' >client.ext
  for who in server client; do
    openssl x509 -req -in "$who.csr" -CA ca.pem -CAkey ca.key -CAcreateserial \
      -days 2 -extfile "$who.ext" -out "$who.pem" 2>/dev/null
  done
) || fail "openssl could not make test certificates"
start_server "$server_bin" "$work/tls.log" --tls_cert_file="$work/server.pem" \
  --tls_key_file="$work/server.key" --tls_client_ca_file="$work/ca.pem"
grep -q 'mutual TLS' "$work/tls.log" || fail "the server does not say it serves mutual TLS"
"$vinctl" decode 1FTMW1T88MFA00001 --server="127.0.0.1:$port" \
  --tls-ca-file="$work/ca.pem" --tls-cert-file="$work/client.pem" \
  --tls-key-file="$work/client.key" | grep -q 'FORD' || fail "vinctl over mutual TLS"
rc=0
"$vinctl" decode 1FTMW1T88MFA00001 --server="127.0.0.1:$port" \
  --tls-ca-file="$work/ca.pem" --deadline=3s >/dev/null 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "vinctl without a client certificate was let in"
echo "reflection, health, decode, streaming, vinctl batch, SIGHUP reload, SIGTERM and mutual TLS behave as a terminal user expects"
