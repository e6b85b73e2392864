#!/usr/bin/env bash
# Installs what is missing (and the offline vPIC snapshot), builds, and starts
# vin-server in the foreground, with the snapshot when it could be fetched
# Prometheus metrics on http://127.0.0.1:9464/metrics, and the cache of
# finished decodes kept across restarts in .data/cache.db.
# Extra arguments are passed to vin-server (see `build/vin-server --help`).
# Stop it with Ctrl-C (SIGINT) or SIGTERM: it finishes work in progress for up
# to --shutdown_grace and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
snapshot=()
if [ -f .data/vpic.lite.db ]; then
  snapshot=(--snapshot_path=.data/vpic.lite.db)
fi
exec build/vin-server "${snapshot[@]}" --metrics_listen=127.0.0.1:9464 \
  --http_listen=127.0.0.1:8080 --cache_path=.data/cache.db \
  --job_path=.data/jobs.db "$@"
