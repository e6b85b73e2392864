#!/usr/bin/env bash
# Generates the stubs of buf.gen.yaml from the repository's .proto files:
# the Python modules of client/python/gen/ (vin.v1, and the google.api and
# google.rpc modules it needs) and the Go stubs of build/gen-go/. Neither is
# in git: they are made again from the protos, so they never drift.
#
# Usage: client/python/generate.sh [OUT_ROOT]
#   OUT_ROOT: the directory the template's outputs go under (default: the
#   repository root); tests pass a temporary one. BUF overrides the buf
#   binary (default: the one scripts/setup.sh installs with npm).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out_root=$(mkdir -p "${1:-$repo}" && cd "${1:-$repo}" && pwd)
buf=${BUF:-$repo/node_modules/@bufbuild/buf-linux-x64/bin/buf}

missing=()
[ -x "$buf" ] || missing+=("buf ($buf: npm, package.json)")
for tool in protoc:protobuf-compiler grpc_python_plugin:protobuf-compiler-grpc \
            protoc-gen-go:protoc-gen-go protoc-gen-go-grpc:protoc-gen-go-grpc; do
  command -v "${tool%%:*}" >/dev/null || missing+=("${tool%%:*} (Debian package ${tool#*:})")
done
if [ ${#missing[@]} -gt 0 ]; then
  printf 'generate.sh: missing %s\n' "${missing[@]}" >&2
  echo "generate.sh: scripts/setup.sh installs them" >&2
  exit 2
fi

cd "$repo"
"$buf" generate --template buf.gen.yaml -o "$out_root"
echo "generate.sh: Python modules in $out_root/client/python/gen, Go stubs in $out_root/build/gen-go"
