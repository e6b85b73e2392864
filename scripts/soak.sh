#!/usr/bin/env bash
# The chaos soak for longer than the suite's 60 s: the real vin-server in
# front of the fake vPIC answering every request with a random fault (or
# not), under mixed clients that misbehave, with SIGHUP reloads; fails on
# any broken promise and prints items, events, upstream requests, faults
# injected and the server's RSS (tests/soak/soak_test.cc).
#
# Usage: scripts/soak.sh [--minutes N] [--seed S] [--build DIR]
#   --minutes N   length of the load (default 10)
#   --seed S      repeat a run's randomness (each run prints its seed)
#   --build DIR   a build directory (default build/; e.g. build-address for
#                 an ASan build made by scripts/test.sh address)
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=10
seed=
build_dir=build
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --minutes=*) minutes=${1#*=}; shift ;;
    --seed) seed=$2; shift 2 ;;
    --seed=*) seed=${1#*=}; shift ;;
    --build) build_dir=$2; shift 2 ;;
    --build=*) build_dir=${1#*=}; shift ;;
    *) echo "soak.sh: unknown argument $1 (want --minutes N, --seed S, --build DIR)" >&2; exit 2 ;;
  esac
done
case "$minutes" in ''|*[!0-9]*) echo "soak.sh: --minutes wants a whole number" >&2; exit 2 ;; esac
if [ "$build_dir" = build ]; then
  scripts/setup.sh build >/dev/null
else
  cmake --build "$build_dir" --target soak_tests -j "$(nproc)"
fi
export VIN_SOAK_SECONDS=$((minutes * 60))
[ -n "$seed" ] && export VIN_SOAK_SEED=$seed
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan/suppressions.txt}"
exec "$build_dir/soak_tests"
