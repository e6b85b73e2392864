#!/usr/bin/env bash
# What a Python user does (README "Other languages"): generate the stubs of
# buf.gen.yaml, then run client/python/example.py against the real
# vin-server in front of the fake vPIC, on loopback, and read what it prints:
# the decoded vehicle, every event of the streamed feed (one terminal event
# per item, the invalid VIN FAILED as invalid), and the INVALID_ARGUMENT
# error with its google.rpc.Status details. The Go stubs are generated too
# (not compiled: that needs the Go toolchain).
# Usage: example_test.sh VIN_SERVER FAKE_VPIC BUF
#   VIN_PYTHON: the interpreter (default /usr/bin/python3, which has Debian's
#   python3-grpcio; a python3 earlier on PATH may not).
set -euo pipefail
server_bin=$1 fake_bin=$2 buf=$3
python=${VIN_PYTHON:-/usr/bin/python3}
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
source "$repo/tests/testing/procs.sh"
trap 'stop_procs; rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

BUF=$buf "$repo/client/python/generate.sh" "$work" || fail "generate.sh failed"
for f in client/python/gen/vin/v1/vin_pb2.py client/python/gen/vin/v1/vin_pb2_grpc.py \
         client/python/gen/google/rpc/status_pb2.py build/gen-go/vin/v1/vin.pb.go \
         build/gen-go/vin/v1/vin_grpc.pb.go build/gen-go/vin/fleet/v1/fleet.pb.go; do
  [ -s "$work/$f" ] || fail "buf generate did not write $f"
done

start_fake "$fake_bin" "$work/fake.log"
start_server "$server_bin" "$work/server.log"

rc=0
out=$(PYTHONPATH="$work/client/python/gen" PYTHONDONTWRITEBYTECODE=1 \
  "$python" "$repo/client/python/example.py" --target "127.0.0.1:$port" 2>&1) || rc=$?
echo "$out"
[ "$rc" -eq 0 ] || fail "example.py exited $rc"

grep -qx 'Decode 1FTMW1T88MFA00001: FORD F-150 2021 (SOURCE_[A-Z]*)' <<<"$out" ||
  fail "Decode did not print FORD F-150 2021"
# The feed: four items, #2 has a wrong check digit.
for id in '#0' '#1' '#2' '#3'; do
  n=$(grep -cE "^  $id [0-9A-Z]+ (done|failed)( |$)" <<<"$out" || true)
  [ "$n" -eq 1 ] || fail "item $id has $n terminal events, expected 1"
done
grep -qE '^  #1 1HGCM82633A004352 done HONDA .* 2003 ' <<<"$out" || fail "item #1 not HONDA 2003"
grep -qE '^  #2 1HGCM82643A004352 failed FAILURE_REASON_INVALID_VIN INVALID_VIN_CHECK_DIGIT: check digit' <<<"$out" ||
  fail "item #2 not FAILED as INVALID_VIN"
[ "$(grep -cE '^  #[0-9]+ [0-9A-Z]+ queued' <<<"$out")" -eq 3 ] || fail "expected 3 queued events (the invalid VIN is not queued)"
grep -qx 'DecodeBatch: 4 of 4 items ended' <<<"$out" || fail "the stream did not end every item"
grep -qE '^Decode 1HGCM82643A004352: INVALID_ARGUMENT: check digit mismatch' <<<"$out" ||
  fail "the invalid VIN's error is not INVALID_ARGUMENT naming the check digit"
grep -qE '^  detail google\.rpc\.ErrorInfo: reason: "INVALID_VIN_CHECK_DIGIT" domain: "vin\.v1"' <<<"$out" ||
  fail "the error's google.rpc.ErrorInfo does not name INVALID_VIN_CHECK_DIGIT"
grep -qE '^  detail google\.rpc\.BadRequest: field_violations \{ field: "vin"' <<<"$out" ||
  fail "the error's google.rpc.BadRequest does not name the field vin"
echo "buf generate (Python, Go) and client/python/example.py behave as a Python user expects"
