#!/usr/bin/env bash
# A fresh Debian 12 machine has only what scripts/setup.sh installs. This
# check fails when a CMakeLists.txt looks for something (find_package,
# pkg_check_modules, find_program) whose Debian package is not in the
# set-up's package list, or that this map does not know yet.
#
# Usage: packages_test.sh REPO_ROOT
set -euo pipefail
repo=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$repo"

# What CMake looks for -> the Debian packages that provide it ("-" when the
# C library or the repo itself provides it). find_program names are
# prefixed with "program:".
declare -A provides=(
  [Threads]=-
  [Protobuf]="libprotobuf-dev protobuf-compiler"
  [gRPC]="libgrpc++-dev protobuf-compiler-grpc"
  [absl]=libabsl-dev
  [CURL]=libcurl4-openssl-dev
  [nlohmann_json]=nlohmann-json3-dev
  [SQLite3]=libsqlite3-dev
  [GTest]="libgtest-dev libgmock-dev"
  [benchmark]=libbenchmark-dev
  [prometheus-cpp]=prometheus-cpp-dev
  [OpenSSL]=libssl-dev
  [CLI11]=libcli11-dev
  [ZLIB]=zlib1g-dev
  [hiredis]=libhiredis-dev
  [simdjson]=libsimdjson-dev
  [jemalloc]=libjemalloc-dev
  [PkgConfig]=pkg-config
  [Boost]=libboost-dev
  [program:grpc_cpp_plugin]=protobuf-compiler-grpc
  [program:chromium]=chromium  # the page's browser test (tests/server/http_page_test.cc)
  [program:buf]="nodejs npm"  # installed from package.json by setup.sh
)

# The set-up's package list, as setup.sh declares it.
mapfile -t listed < <(bash -c "$(sed -n '/^packages=(/,/^)/p' scripts/setup.sh)
printf '%s\n' \"\${packages[@]}\"")
[ "${#listed[@]}" -gt 0 ] || { echo "FAIL: no packages=( ... ) list in scripts/setup.sh"; exit 1; }
in_setup() {
  local p
  for p in "${listed[@]}"; do [ "$p" = "$1" ] && return 0; done
  return 1
}

mapfile -t cmake_files < <(find . -name CMakeLists.txt -not -path './build*' \
  -not -path './node_modules/*' -not -path './.data/*')
# Names looked for, one per line.
wanted=$(
  for f in "${cmake_files[@]}"; do
    # Strip comments, then join lines so that calls spanning lines are seen.
    sed 's/#.*//' "$f" | tr '\n' ' ' |
      grep -oiE '(find_package|pkg_check_modules|find_program)\([^)]*\)' || true
  done | while read -r call; do
    args=${call#*(}
    args=${args%)}
    read -r -a words <<<"$args"
    case "${call,,}" in
      find_package*) echo "${words[0]}" ;;
      find_program*) echo "program:${words[1]}" ;;
      pkg_check_modules*)
        # pkg_check_modules(PREFIX [REQUIRED] [IMPORTED_TARGET] module...)
        for w in "${words[@]:1}"; do
          case "$w" in REQUIRED|QUIET|IMPORTED_TARGET|GLOBAL|NO_CMAKE_PATH|NO_CMAKE_ENVIRONMENT_PATH) ;;
            *) echo "${w%%[<>=]*}" ;;
          esac
        done ;;
    esac
  done | sort -u
)

failures=0
checked=0
while read -r name; do
  [ -n "$name" ] || continue
  checked=$((checked + 1))
  if [ -z "${provides[$name]+x}" ]; then
    echo "FAIL: CMake looks for '$name', which this check does not map to a Debian package;" \
         "add it to tests/setup/packages_test.sh and its package to scripts/setup.sh"
    failures=$((failures + 1))
    continue
  fi
  for pkg in ${provides[$name]}; do
    [ "$pkg" = - ] && continue
    if ! in_setup "$pkg"; then
      echo "FAIL: CMake looks for '$name' (Debian package $pkg), but scripts/setup.sh does not install $pkg"
      failures=$((failures + 1))
    fi
  done
done <<<"$wanted"

echo "checked $checked things CMake looks for against ${#listed[@]} set-up packages"
[ "$failures" -eq 0 ]
