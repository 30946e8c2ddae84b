#!/usr/bin/env bash
# The whole test suite (or some of it) in a fresh Debian of another release, from this machine: a
# chroot made with debootstrap, the project's committed HEAD cloned into it, its build dependencies
# installed there by packaging/install-build-deps.sh, and this machine's Swift toolchain bound in
# read-only. `make test-trixie` runs it for Debian 13 (GStreamer 1.26, PipeWire 1.4).
#
#   scripts/suite-in-chroot.sh [SUITE] [-- COMMAND]      (root; SUITE: trixie by default)
#
# COMMAND runs in the clone instead of `make test` (`-- swift test --skip-build --filter NAME`
# after a `make test` or `swift build --build-tests` there). The base system (debootstrap and the
# Swift toolchain's own libraries) is kept in $CHROOT_BASE (default /var/tmp/tonearm-base-SUITE) and
# copied for each run; KEEP=1 keeps the run's copy (its path is printed) and REUSE=DIR runs in one
# kept before, with its packages and build, for a quicker second try. Logs: $LOG (default
# /var/tmp/tonearm-SUITE-test.log).
set -u
cd "$(dirname "$0")/.."
PROJECT=$(pwd)
SUITE=trixie
if [ $# -gt 0 ] && [ "$1" != -- ]; then SUITE=$1; shift; fi
[ "${1:-}" = -- ] && shift
COMMAND=${*:-make test}
BASE=${CHROOT_BASE:-/var/tmp/tonearm-base-$SUITE}
LOG=${LOG:-/var/tmp/tonearm-$SUITE-test.log}
[ "$(id -u)" = 0 ] || { echo "suite-in-chroot: run it as root (debootstrap, chroot, mounts)"; exit 2; }
case "$SUITE" in bookworm) GCC=12 ;; *) GCC=14 ;; esac
# what the Swift toolchain itself needs to start and link (swift.org's list for Debian)
SWIFT_DEPS="binutils git gnupg2 libc6-dev libcurl4-openssl-dev libedit2 libgcc-$GCC-dev libpython3-dev libsqlite3-0"
SWIFT_DEPS+=" libstdc++-$GCC-dev libxml2-dev libz3-dev pkg-config tzdata zlib1g-dev make ca-certificates libncurses6 libncurses-dev"
MIRROR=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null)
MIRROR=${MIRROR:-http://deb.debian.org/debian}

mounts=()
bind() {  # bind SRC DST [ro]
    mkdir -p "$2"
    mount --rbind "$1" "$2" && mounts+=("$2")
    if [ "${3:-}" = ro ]; then mount -o remount,bind,ro "$2"; fi
}
unmount_all() {
    local i
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -R "${mounts[$i]}" 2>/dev/null || umount -lR "${mounts[$i]}"; done
    mounts=()
}
enter() {  # proc, dev, sys, name resolution and this suite's apt source
    local root=$1
    mkdir -p "$root/proc" && mount -t proc proc "$root/proc" && mounts+=("$root/proc")
    bind /dev "$root/dev"
    bind /sys "$root/sys"
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    # debootstrap's sources.list names the suite too: apt warned of every target configured twice
    rm -f "$root"/etc/apt/sources.list.d/*.sources "$root/etc/apt/sources.list"
    printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        "$MIRROR" "$SUITE" "$SUITE" >"$root/etc/apt/sources.list.d/debian.sources"
}

# a REUSE run has its own copy, packages and all: no base is needed (one was made anew, minutes
# of debootstrap, when CHROOT_BASE was not given again)
if [ -z "${REUSE:-}" ] && [ ! -x "$BASE/usr/bin/git" ]; then
    command -v debootstrap >/dev/null || apt-get install -y debootstrap >/dev/null || { echo "no debootstrap"; exit 2; }
    echo "suite-in-chroot: making the $SUITE base in $BASE (a few minutes, once)"
    debootstrap --variant=minbase "$SUITE" "$BASE" "$MIRROR" >"$LOG.debootstrap" 2>&1 || { echo "debootstrap failed: $LOG.debootstrap"; exit 2; }
    enter "$BASE"
    chroot "$BASE" bash -c "apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $SWIFT_DEPS" \
        >"$LOG.base" 2>&1 || { unmount_all; echo "the base's packages failed: $LOG.base"; exit 2; }
    chroot "$BASE" apt-get clean
    unmount_all
fi

if [ -n "${REUSE:-}" ]; then
    tmp=$REUSE
    root=$tmp/root
else
    tmp=$(mktemp -d /var/tmp/tonearm-$SUITE.XXXXXX)
    root=$tmp/root
    cp -a "$BASE" "$root"
fi
cleanup() {
    # what the run left inside (a bus, a sound server, tonearmd), ended by root directory
    local p
    for p in /proc/[0-9]*; do [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && kill -9 "${p#/proc/}" 2>/dev/null; done
    sleep 0.5
    unmount_all
    if [ "${KEEP:-}" = 1 ] || [ -n "${REUSE:-}" ]; then echo "suite-in-chroot: kept $tmp (REUSE=$tmp to run in it again)"; return; fi
    findmnt -rn -o TARGET | grep -q "^$tmp" || rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT
enter "$root"
toolchain=$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")
bind "$toolchain" "$root$toolchain" ro
# the package mirror git's system config sends package URLs to, as on this machine
for m in $(git config --system --get-regexp '^url\..*\.insteadof$' 2>/dev/null | sed -E 's/^url\.(.*)\.insteadof .*/\1/I' | sort -u); do
    [ -d "$m" ] && bind "$m" "$root$m" ro
done
cp /etc/gitconfig "$root/etc/gitconfig" 2>/dev/null
if [ -z "${REUSE:-}" ]; then
    git clone -q "$PROJECT" "$root/home/tonearm" || { echo "clone failed"; exit 1; }
fi
echo "suite-in-chroot: $SUITE, $(git -C "$root/home/tonearm" log -1 --format='%h %s' | cut -c1-80); '$COMMAND'; log: $LOG"
start=$(date +%s)
chroot "$root" env -i HOME=/root PATH="$toolchain/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive \
    bash -c "cd /home/tonearm && bash packaging/install-build-deps.sh >/dev/null && $COMMAND" >"$LOG" 2>&1
status=$?
echo "suite-in-chroot: '$COMMAND' ended with $status after $(( $(date +%s) - start )) s; $(grep -E '^tests: ' "$LOG" | tail -1)"
exit $status
