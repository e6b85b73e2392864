#!/usr/bin/env bash
# Installs what is missing, builds, lints the protos with buf and runs the
# whole test suite.
#
# Usage: scripts/test.sh                 normal build in build/
#        scripts/test.sh address         ASan + UBSan build in build-address/
#        scripts/test.sh thread          TSan build in build-thread/
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=${1:-}
if [ -n "$sanitize" ]; then
  scripts/setup.sh "build-$sanitize" -DVIN_SANITIZE="$sanitize"
  build_dir="build-$sanitize"
else
  scripts/setup.sh build
  build_dir=build
fi

echo "== buf lint"
node_modules/@bufbuild/buf-linux-x64/bin/buf lint
echo "buf lint: ok"

echo "== tests ($build_dir)"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan/suppressions.txt}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1 halt_on_error=1}"
cd "$build_dir"
ctest -j "$(nproc)" --output-on-failure
