#!/usr/bin/env bash
# The cache-hit paths before and after a change, in one run (issue 29's
# benchmark: the checks of rule 19 must not cost more than 5% there): the
# gRPC hot path (bench/hot_throughput.sh: DecodeBatch cache hits and
# joiners, against its ceiling) and HTTP hits (bench/http_hits.sh: the
# gateway's cache hits against nginx serving the same bytes), each run
# ROUNDS times alternating the two builds, so that the machine's noise
# falls on both. Prints every run's numbers, then each build's median and
# after / before.
#
# Usage: bench/before_after.sh BEFORE_BUILD AFTER_BUILD [ROUNDS] [SECONDS] [ITEMS]
#   BEFORE_BUILD: a build directory of the old code (e.g. a git worktree's
#   build/ with vin-server, fake-vpic, stream_client and ceiling_server
#   built); defaults 3 rounds, wrk for 10 s, 100000 items.
set -euo pipefail
cd "$(dirname "$0")/.."
before=${1:?BEFORE_BUILD}
after=${2:?AFTER_BUILD}
rounds=${3:-3}
secs=${4:-10}
items=${5:-100000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for r in $(seq "$rounds"); do
  for side in before after; do
    build=$before
    [ "$side" = after ] && build=$after
    out=$(BUILD=$build bench/hot_throughput.sh "$items" 100 2>&1)
    rate=$(awk '$1 == "server" && $3 == "items/s" { print $2 }' <<<"$out")
    ratio=$(awk -F' = ' '/server\/ceiling/ { print $2 }' <<<"$out")
    cpu=$(awk '$1 == "server" && $3 == "items/s" { for (i = 1; i <= NF; i++) if ($i == "CPU") print $(i + 1) }' <<<"$out")
    out=$(BUILD=$build bench/http_hits.sh "$secs" 100 2>&1)
    rps=$(awk '$1 == "gateway" && $3 == "req/s" { print $2 }' <<<"$out")
    nginx=$(awk '$1 == "nginx" && $3 == "req/s" { print $2 }' <<<"$out")
    vs=$(awk -F': ' '/gateway \/ nginx/ { sub(/x.*/, "", $2); print $2 }' <<<"$out")
    printf 'round %d %-6s grpc %8s items/s (%s us/item, %s of the ceiling)  http %10s req/s (nginx %s, %sx)\n' \
      "$r" "$side" "$rate" "$cpu" "$ratio" "$rps" "$nginx" "$vs"
    echo "$rate $rps $vs $ratio" >>"$work/$side"
  done
done

median() {  # FILE COLUMN
  sort -g -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'
}
for side in before after; do
  printf '%-6s median: grpc %s items/s (%s of the ceiling), http %s req/s (%sx nginx)\n' \
    "$side" "$(median "$work/$side" 1)" "$(median "$work/$side" 4)" \
    "$(median "$work/$side" 2)" "$(median "$work/$side" 3)"
done
awk -v gb="$(median "$work/before" 1)" -v ga="$(median "$work/after" 1)" \
    -v hb="$(median "$work/before" 2)" -v ha="$(median "$work/after" 2)" \
    -v nb="$(median "$work/before" 3)" -v na="$(median "$work/after" 3)" \
    'BEGIN { printf "after / before: grpc %.3f, http %.3f (against nginx in its own run: %.3f); goal >= 0.95\n", ga / gb, ha / hb, na / nb }'
