#!/usr/bin/env bash
# Installs what is missing, builds, and starts vin-server in the foreground.
# Extra arguments are passed to vin-server (see `build/vin-server --help`).
# Stop it with Ctrl-C (SIGINT) or SIGTERM: it finishes work in progress for up
# to --shutdown_grace and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
exec build/vin-server "$@"
