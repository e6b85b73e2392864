#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/*_fuzz.cc) with clang, ASan and UBSan in
# build-fuzz/, and runs each for SECONDS (default 60) on its corpus
# (fuzz/corpus/<target>/, with fuzz/regressions/<target>/: inputs that once
# crashed it). New inputs found go to build-fuzz/corpus/, never into the
# repo; a crash leaves its input in build-fuzz/artifacts/ and fails the run.
# Prints the executions of each target.
#
# Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
scripts/setup.sh build >/dev/null  # the packages, clang among them
if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVIN_FUZZ=ON >/dev/null
fi
cmake --build build-fuzz --target fuzz -j "$(nproc)"
mkdir -p build-fuzz/artifacts
failed=0
for target in vin vpic retry_after feed key_pattern routes; do
  work=build-fuzz/corpus/$target
  mkdir -p "$work"
  dirs=("$work" "fuzz/corpus/$target")
  [ -d "fuzz/regressions/$target" ] && dirs+=("fuzz/regressions/$target")
  set +e
  "build-fuzz/fuzz/${target}_fuzz" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="build-fuzz/artifacts/${target}-" "${dirs[@]}" \
    >"build-fuzz/${target}.log" 2>&1
  rc=$?
  set -e
  execs=$(awk '/stat::number_of_executed_units/ { print $2 }' "build-fuzz/${target}.log")
  if [ "$rc" -ne 0 ]; then
    failed=1
    echo "fuzz $target: FAILED (exit $rc) after ${execs:-?} executions:"
    grep -E 'ERROR|SUMMARY|Test unit written' "build-fuzz/${target}.log" | head -5
  else
    echo "fuzz $target: ${execs:-?} executions in ${seconds} s, no crash"
  fi
done
exit "$failed"
