#!/usr/bin/env bash
# The published npm vPIC clients (tests/clients/package.json, installed by
# scripts/setup.sh) against the real vin-server's gateway in front of the
# fake vPIC: tests/clients/npm_clients.mjs says what is checked.
# Usage: npm_clients_test.sh VIN_SERVER FAKE_VPIC
set -euo pipefail
server_bin=$1 fake_bin=$2
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
start_fake "$fake_bin" "$work/fake.log"
start_server "$server_bin" "$work/server.log" --http_listen=127.0.0.1:0
http_port=$(await_line "$work/server.log" 'HTTP gateway on ' |
  sed -E 's/.*\(port ([0-9]+)\).*/\1/')
node "$here/npm_clients.mjs" "http://127.0.0.1:$http_port/api/vehicles" \
  "$repo/tests/fixtures/vpic"
