#!/usr/bin/env bash
# Checks the README's promise that the test command works on a fresh Debian 12
# machine: builds a minimal Debian 12 root with debootstrap (minbase), puts a
# clean clone of this repository's HEAD in it at /root/vin, and runs
# `cd /root/vin && scripts/test.sh` there as root in a chroot, with a clean
# environment. Prints the time of each phase and exits with the test
# command's status.
#
# Usage: scripts/fresh_machine_check.sh [--keep] [ROOT_DIR]
#   ROOT_DIR   where to build the root (must not exist, or be empty);
#              default: a new directory under /var/tmp.
#   --keep     keep the root afterwards (default: remove it at the end).
#
# Must be run as root (debootstrap, mount and chroot need it). Installs the
# debootstrap Debian package on the host if it is missing. The root uses the
# host's Debian mirror (bookworm, bookworm-updates, bookworm-security; or
# MIRROR and SECURITY_MIRROR when the host's apt sources have none), gets
# the host's extra CA certificates (/usr/local/share/ca-certificates) and
# npm `cafile`, so that package downloads work as they do on the host, and a
# copy of /etc/resolv.conf. /proc, /sys, /dev, /dev/pts and /dev/shm are
# mounted for the test suite and unmounted on exit, also on failure.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
suite=bookworm

usage() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
}

fail() {
  echo "fresh_machine_check: $*" >&2
  exit 1
}

say() {
  echo "fresh_machine_check: $*"
}

keep=0
root=
for arg in "$@"; do
  case "$arg" in
    --keep) keep=1 ;;
    -h | --help) usage; exit 0 ;;
    -*) usage >&2; fail "unknown option: $arg" ;;
    *)
      [ -z "$root" ] || { usage >&2; fail "only one ROOT_DIR, got '$root' and '$arg'"; }
      root=$arg
      ;;
  esac
done

[ "$(id -u)" -eq 0 ] ||
  fail "must be run as root (debootstrap, mount and chroot need it): sudo $0 $*"

start_total=$SECONDS

# --- the host's Debian mirror ---------------------------------------------
# deb822 (/etc/apt/sources.list.d/debian.sources) first, then one-line style.
host_uri_for() { # $1: suite; prints the first URI that serves it
  local want=$1
  host_uris "$want" | sed -n 1p
}
host_uris() { # $1: suite; prints every URI that serves it
  local want=$1 f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v want="$want" '
      function flush() { if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " want " ") && uri != "") { print uri; found = 1; exit } }
      /^[ \t]*$/ { flush(); types = ""; uri = ""; suites = ""; next }
      /^[ \t]*#/ { next }
      tolower($1) == "types:" { $1 = ""; types = $0 }
      tolower($1) == "uris:" { uri = $2 }
      tolower($1) == "suites:" { $1 = ""; suites = $0 }
      END { if (!found) flush() }' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    # deb [options] URI SUITE COMPONENTS...
    sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$f" |
      awk -v want="$want" '$1 == "deb" && $3 == want { print $2; exit }'
  done
}
mirror=${MIRROR:-$(host_uri_for "$suite")}
[ -n "$mirror" ] || fail "no $suite mirror in the host's apt sources: set MIRROR=<Debian mirror URL>"
security=${SECURITY_MIRROR:-$(host_uri_for "$suite-security")}
[ -n "$security" ] || fail "no $suite-security source in the host's apt sources: set SECURITY_MIRROR=<Debian security mirror URL>"

# --- debootstrap on the host ------------------------------------------------
if ! command -v debootstrap >/dev/null; then
  say "installing debootstrap on the host (apt-get)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
fi
command -v git >/dev/null || fail "git is required on the host to clone the repository"

# --- the root directory -----------------------------------------------------
if [ -z "$root" ]; then
  root=$(mktemp -d /var/tmp/fresh-machine.XXXXXX)
else
  if [ -e "$root" ]; then
    [ -d "$root" ] || fail "$root exists and is not a directory"
    [ -z "$(ls -A "$root")" ] || fail "$root is not empty (give a new or empty directory)"
  fi
  mkdir -p "$root"
fi
root=$(cd "$root" && pwd -P)
[ "$root" != / ] || fail "ROOT_DIR must not be /"

# --- mounts, and cleanup on exit --------------------------------------------
mounted=() # in mount order; unmounted in reverse

mount_in_root() { # $1: path inside the root; the rest: mount arguments
  local target=$root$1
  shift
  mkdir -p "$target"
  mount "$@" "$target"
  mounted+=("$target")
  # Never let a mount made here propagate back to the host (or vice versa).
  mount --make-private "$target"
}

mounts_under_root() {
  awk -v r="$root" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo
}

cleanup() {
  local status=$? pid i left
  trap - EXIT INT TERM
  set +e
  # Processes still running in the root (a server a test left behind, an
  # agent) would keep the mounts busy: they were started by this script.
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    [ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$root" ] || continue
    kill -TERM "$pid" 2>/dev/null
  done
  sleep 1
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    [ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$root" ] || continue
    kill -KILL "$pid" 2>/dev/null
  done
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" ||
      echo "fresh_machine_check: WARNING: cannot unmount ${mounted[i]}" >&2
  done
  left=$(mounts_under_root)
  if [ "$keep" -eq 1 ]; then
    say "kept the root: $root"
  elif [ -n "$left" ]; then
    echo "fresh_machine_check: WARNING: still mounted, NOT removing $root:" >&2
    echo "$left" >&2
  else
    say "removing $root"
    rm -rf --one-file-system "$root"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

duration() { # $1: seconds
  printf '%dm%02ds' $(($1 / 60)) $(($1 % 60))
}

# --- phase 1: debootstrap ---------------------------------------------------
say "debootstrap --variant=minbase $suite $root $mirror"
start=$SECONDS
debootstrap --variant=minbase "$suite" "$root" "$mirror"
time_debootstrap=$((SECONDS - start))
say "debootstrap took $(duration "$time_debootstrap")"

# --- the root's configuration -----------------------------------------------
rm -f "$root/etc/apt/sources.list"
cat > "$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
say "apt sources in the root: $mirror ($suite, $suite-updates), $security ($suite-security)"

cp -L /etc/resolv.conf "$root/etc/resolv.conf"
if [ ! -s "$root/etc/hosts" ]; then
  # Every installed Debian machine has these; a debootstrap root may not.
  printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' > "$root/etc/hosts"
  say "wrote a minimal /etc/hosts (localhost) in the root"
fi

# Extra CA certificates: the root's ca-certificates package (installed later
# by setup.sh) runs update-ca-certificates, which adds these to
# /etc/ssl/certs/ca-certificates.crt. apt itself uses the plain-http mirror.
if [ -d /usr/local/share/ca-certificates ] &&
  [ -n "$(ls -A /usr/local/share/ca-certificates)" ]; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp -a /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
  say "copied extra CA certificates:" \
    "$(cd /usr/local/share/ca-certificates && find . -type f -printf '%P ')"
  if [ -x "$root/usr/sbin/update-ca-certificates" ]; then
    chroot "$root" /usr/sbin/update-ca-certificates >/dev/null
  fi
fi

# npm's cafile, where the host has one. When it is the system bundle, the
# copy is regenerated by update-ca-certificates (with the extra CAs above)
# once setup.sh installs ca-certificates, before npm first runs.
if command -v npm >/dev/null; then
  cafile=$(cd / && npm config get cafile 2>/dev/null || true)
  if [ -n "$cafile" ] && [ "$cafile" != null ] && [ "$cafile" != undefined ]; then
    [ -f "$cafile" ] || fail "npm cafile $cafile (host) does not exist"
    mkdir -p "$root$(dirname "$cafile")"
    cp -L "$cafile" "$root$cafile"
    printf 'cafile=%s\n' "$cafile" > "$root/root/.npmrc"
    say "npm cafile in the root: $cafile (/root/.npmrc)"
  fi
fi

# --- a clean clone of HEAD ----------------------------------------------------
head=$(git -C "$repo" rev-parse HEAD)
git clone --quiet --no-hardlinks "$repo" "$root/root/vin"
git -C "$root/root/vin" checkout --quiet --detach "$head"
say "cloned $repo at $head ($(git -C "$repo" log -1 --format=%s "$head" | cut -c1-60)) to /root/vin"

# --- mounts for the test suite ------------------------------------------------
mount_in_root /proc -t proc proc
mount_in_root /sys -t sysfs sysfs
mount_in_root /dev --bind /dev
mount_in_root /dev/pts --bind /dev/pts
mount_in_root /dev/shm -t tmpfs -o mode=1777,nosuid,nodev tmpfs

# --- phase 2: the README's test command ---------------------------------------
say "running 'cd /root/vin && scripts/test.sh' in the root as root"
start=$SECONDS
# In the background, so that a SIGINT/SIGTERM to this script runs the cleanup
# at once (it stops what still runs in the root) instead of after the tests.
chroot "$root" /usr/bin/env -i HOME=/root USER=root LOGNAME=root TERM=dumb \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  /bin/bash -lc 'cd /root/vin && scripts/test.sh' </dev/null &
status=0
wait "$!" || status=$?
time_test=$((SECONDS - start))

echo
say "debootstrap:  $(duration "$time_debootstrap")"
say "test command: $(duration "$time_test") (exit status $status)"
say "total:        $(duration $((SECONDS - start_total)))"
exit "$status"
