#!/usr/bin/env bash
# The published npm vPIC clients (tests/clients/package.json, installed by
# scripts/setup.sh) against the real vin-server's gateway, live (in front of
# the fake vPIC) and offline (vPIC unreachable: a port nothing listens on;
# the snapshot loaded): tests/clients/npm_clients.mjs says what is checked.
# Usage: npm_clients_test.sh VIN_SERVER FAKE_VPIC SNAPSHOT
set -euo pipefail
server_bin=$1 fake_bin=$2 snapshot=$3
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
source "$repo/tests/testing/procs.sh"
trap 'stop_procs; rm -rf "$work"' EXIT

if [ ! -d "$here/node_modules/@shaggytools/nhtsa-api-wrapper" ] ||
   [ ! -d "$here/node_modules/nhtsa" ]; then
  echo "the npm clients are not installed: run scripts/setup.sh" >&2
  exit 1
fi
if [ ! -f "$snapshot" ]; then
  echo "no snapshot at $snapshot: run scripts/setup.sh" >&2
  exit 1
fi
# run_clients MODE LOG [server flags...]
run_clients() {
  local mode=$1 log=$2
  shift 2
  start_server "$server_bin" "$log" --http_listen=127.0.0.1:0 "$@"
  local http_port
  http_port=$(await_line "$log" 'HTTP gateway on ' |
    sed -E 's/.*\(port ([0-9]+)\).*/\1/')
  echo "== $mode"
  node "$here/npm_clients.mjs" "http://127.0.0.1:$http_port/api/vehicles" \
    "$repo/tests/fixtures/vpic" "$mode"
  kill "$server_pid"
  wait "$server_pid" || true
}
start_fake "$fake_bin" "$work/fake.log"
run_clients live "$work/live.log"
# Offline: one attempt each, so that each request finds vPIC gone at once
# (the retries' timing is tested elsewhere).
vpic_url="http://127.0.0.1:$(free_port)"
run_clients offline "$work/offline.log" --snapshot_path="$snapshot" \
  --max_attempts=1
