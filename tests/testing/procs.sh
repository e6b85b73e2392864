# Shell helpers for scripts that run fake-vpic and vin-server as processes
# (and nginx, for the benchmarks) on loopback (sourced by tests/server/terminal_test.sh,
# tests/python/example_test.sh and bench/).
# They set globals: fake_pid, vpic_url, server_pid, port. The caller's EXIT
# trap should call stop_procs.

# await_line FILE REGEX: waits up to 20 s for a matching line; prints it.
await_line() {
  local line
  for _ in $(seq 200); do
    if line=$(grep -m1 -E "$2" "$1" 2>/dev/null); then echo "$line"; return 0; fi
    sleep 0.1
  done
  echo "timed out waiting for '$2' in $1:" >&2
  cat "$1" >&2
  return 1
}

# start_fake FAKE_BIN LOG [flags...]: starts the fake vPIC on a free port.
start_fake() {
  local bin=$1 log=$2
  shift 2
  "$bin" --port=0 "$@" >"$log" 2>&1 &
  fake_pid=$!
  vpic_url=$(await_line "$log" 'listening on' | grep -oE 'http://[^ ]+')
}

# start_server SERVER_BIN LOG [flags...]: starts vin-server on a free port
# in front of $vpic_url.
start_server() {
  local bin=$1 log=$2
  shift 2
  "$bin" --listen=127.0.0.1:0 --vpic_base_url="$vpic_url" "$@" >"$log" 2>&1 &
  server_pid=$!
  port=$(await_line "$log" 'listening on' | sed -E 's/.*\(port ([0-9]+)[,)].*/\1/')
}

# free_port: a TCP port free on 127.0.0.1 now.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_nginx WORK PORT: nginx serving WORK/www as static files on
# 127.0.0.1:PORT (the benchmarks' comparison), its files in WORK; sets
# nginx_pid. Stop it before stop_procs, whose `wait` would wait for it.
start_nginx() {
  local work=$1 port=$2
  mkdir -p "$work/tmp" "$work/www"
  # Started by root, nginx's workers run as nobody, and mktemp -d is 0700:
  # without this they answer 403 to everything (a 153-byte page, which the
  # benchmarks once measured as nginx's speed).
  chmod a+rx "$work"
  chmod -R a+rX "$work/www"
  cat >"$work/nginx.conf" <<CONF
worker_processes 2;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off;
  default_type application/json;
  keepalive_requests 1000000;
  client_body_temp_path $work/tmp;
  proxy_temp_path $work/tmp;
  fastcgi_temp_path $work/tmp;
  uwsgi_temp_path $work/tmp;
  scgi_temp_path $work/tmp;
  server { listen 127.0.0.1:$port; root $work/www; }
}
CONF
  nginx -c "$work/nginx.conf" -p "$work" -g 'daemon off;' &
  nginx_pid=$!
}

# await_same URL FILE: waits (5 s at most) until URL answers 200 with FILE's
# bytes; fails the script otherwise (a benchmark's baseline must serve what
# it is compared with).
await_same() {
  for _ in $(seq 50); do
    curl -sf "$1" -o "$2.served" 2>/dev/null && cmp -s "$2" "$2.served" && return 0
    sleep 0.1
  done
  echo "$1 does not answer the bytes of $2 (status $(curl -s -o /dev/null -w '%{http_code}' "$1"))" >&2
  exit 1
}

# check_wrk OUTPUT: fails the script when wrk saw answers other than 2xx/3xx.
check_wrk() {
  if grep -q 'Non-2xx or 3xx responses' "$1"; then
    echo "wrk: $(grep 'Non-2xx' "$1") in $1" >&2
    exit 1
  fi
}

stop_procs() {
  kill "${server_pid:-}" "${fake_pid:-}" 2>/dev/null || true
  wait 2>/dev/null || true
}
