#!/usr/bin/env bash
# Bulk jobs (DESIGN rule 20) against the stream, in the same run:
#  1. A job of ITEMS cached VINs (the feed cycles over DISTINCT VINs, all in
#     the cache first) and the same feed through `vinctl batch`: items/s of
#     each (goal: the job at >= 0.8x the stream) and the server's peak RSS
#     during each, next to its idle RSS (goal: the job within 64 MB of idle).
#     The job's time is from `vinctl job submit` to its end (the upload, the
#     store and the run), and to the end of `vinctl job fetch` writing the
#     file batch writes (started right after the submit, following the job
#     while it runs); the stream's the whole `vinctl batch`.
#  2. A job of KILL_ITEMS distinct VINs (cold: vPIC's fake answers them)
#     killed with SIGKILL at about half: the time from the restart to the job
#     running again, and the VINs asked of vPIC twice (goal: <= the window,
#     256).
#
# Usage: bench/job_feed.sh [ITEMS] [DISTINCT] [KILL_ITEMS]
#   defaults 1000000, 10000, 100000. Environment: BUILD (default build);
#   STORE=redis keeps the jobs in a redis-server of the script's own
#   (appendonly yes, its files in the work directory) as a fleet does,
#   with --job_lease=2s: the restart of part 2 then waits for the dead
#   process's lease to run out, as another replica would.
set -euo pipefail
cd "$(dirname "$0")/.."
items=${1:-1000000}
distinct=${2:-10000}
kill_items=${3:-100000}
build=${BUILD:-build}
store=${STORE:-sqlite}
work=$(mktemp -d)
source tests/testing/procs.sh
stop_redis() {
  [ -f "$work/redis.pid" ] && kill "$(cat "$work/redis.pid")" 2>/dev/null || true
}
trap 'stop_procs; stop_redis; rm -rf "$work"' EXIT

if [ "$store" = redis ]; then
  redis_port=$(free_port)
  # Daemonized: not a child the procs' `wait` would wait for.
  redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$work" \
    --appendonly yes --save '' --daemonize yes --pidfile "$work/redis.pid" \
    --logfile "$work/redis.log"
  for _ in $(seq 100); do
    redis-cli -p "$redis_port" ping 2>/dev/null | grep -q PONG && break
    sleep 0.1
  done
fi
# The store flags of a server; $1: the SQLite file's name.
store_flags() {
  if [ "$store" = redis ]; then
    echo "--redis_url=redis://127.0.0.1:$redis_port --job_lease=2s"
  else
    echo "--job_path=$work/$1"
  fi
}

now() { date +%s.%N; }
kb() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$server_pid/status"; }
reset_peak() { echo 5 > "/proc/$server_pid/clear_refs"; }

python3 bench/gen_vins.py "$items" --distinct "$distinct" --seed 7 > "$work/feed.csv"
python3 bench/gen_vins.py "$distinct" --distinct "$distinct" --seed 7 > "$work/warm.csv"
start_fake "$build/fake-vpic" "$work/fake.log" --full_answers
start_server "$build/vin-server" "$work/server.log" --upstream_rate=0 \
  $(store_flags jobs.db) --job_max_items="$items"
server="--server=127.0.0.1:$port"
"$build/vinctl" batch "$server" --in="$work/warm.csv" --out=/dev/null 2>/dev/null
idle=$(kb VmRSS)
echo "store=$store items=$items distinct=$distinct (all cached), idle RSS $((idle / 1024)) MB"

reset_peak
t0=$(now)
id=$("$build/vinctl" job submit "$server" --in="$work/feed.csv")
t1=$(now)
# The fetch starts at once and follows the job while it runs, as a client
# would; the watch notes when the job itself ends.
("$build/vinctl" job watch "$id" "$server" > "$work/watch.log"; now > "$work/job_end") &
watch_pid=$!
"$build/vinctl" job fetch "$id" "$server" --in="$work/feed.csv" --out="$work/fetched.csv"
t2f=$(now)
wait "$watch_pid"
t2=$(cat "$work/job_end")
job_peak=$(kb VmHWM)
tail -1 "$work/watch.log"

reset_peak
t3=$(now)
"$build/vinctl" batch "$server" --in="$work/feed.csv" --out=/dev/null 2>/dev/null || true
t4=$(now)
stream_peak=$(kb VmHWM)
awk -v n="$items" -v a="$t0" -v b="$t1" -v c="$t2" -v f="$t2f" -v d="$t3" -v e="$t4" \
    -v i="$idle" -v jp="$job_peak" -v sp="$stream_peak" 'BEGIN {
  job = n / (c - a); fetched = n / (f - a); stream = n / (e - d)
  printf "job:    %.0f items/s (submit %.1f s, run %.1f s), peak RSS %.1f MB (idle + %.1f MB; goal <= 64)\n",
         job, b - a, c - b, jp / 1024, (jp - i) / 1024
  printf "job with its fetch (vinctl job fetch, the same file as batch, following the run): %.0f items/s (done %.1f s after the job)\n",
         fetched, f - c
  printf "stream: %.0f items/s (%.1f s), peak RSS %.1f MB (idle + %.1f MB)\n",
         stream, e - d, sp / 1024, (sp - i) / 1024
  printf "job / stream: %.2fx; job with fetch / stream: %.2fx (goal >= 0.8x)\n",
         job / stream, fetched / stream }'

# 2. SIGKILL at half of a cold job, and the restart.
python3 bench/gen_vins.py "$kill_items" --seed 11 > "$work/cold.csv"
stop_procs
start_fake "$build/fake-vpic" "$work/fake2.log" --log_requests
start_server "$build/vin-server" "$work/server2.log" --upstream_rate=60000 \
  $(store_flags kill.db)
server="--server=127.0.0.1:$port"
id=$("$build/vinctl" job submit "$server" --in="$work/cold.csv")
while :; do
  done_now=$("$build/vinctl" job status "$id" "$server" | awk '{ split($3, a, "/"); print a[1] }')
  [ "$done_now" -ge $((kill_items / 2)) ] && break
done
kill -9 "$server_pid"
wait "$server_pid" 2>/dev/null || true
t5=$(now)
start_server "$build/vin-server" "$work/server3.log" --upstream_rate=60000 \
  $(store_flags kill.db)
server="--server=127.0.0.1:$port"
await_line "$work/server3.log" "job $id resumed" > /dev/null
t6=$(now)
"$build/vinctl" job watch "$id" "$server" > "$work/watch2.log"
tail -1 "$work/watch2.log"
vins_asked() {
  grep -oE ' (vin|batch)=[^ ]+' "$1" | sed -E 's/^ (vin|batch)=//' | tr ';' '\n' | cut -d, -f1
}
asked=$(vins_asked "$work/fake2.log" | wc -l)
distinct_asked=$(vins_asked "$work/fake2.log" | sort -u | wc -l)
twice=$((asked - distinct_asked))
awk -v a="$t5" -v b="$t6" -v t="$twice" -v n="$asked" -v k="$kill_items" 'BEGIN {
  printf "killed at half of %d: running again %.2f s after the restart; VINs asked %d, asked again %d (goal <= 256)\n",
         k, b - a, n, t }'
