#!/bin/bash
# Checks `make install` into a prefix of its own, the way a person installs to /opt or ~/.local:
#   make install PREFIX=<temporary>/opt/tonearm DESTDIR=   (the files at their real paths), then
#   1. the desktop entry's Exec and TryExec are absolute and name the installed tonearmd, which
#      exists and runs: GNOME and XFCE hide an entry whose TryExec is not found, and a prefix's
#      bin/ is seldom on PATH; desktop-file-validate accepts the entry; its Icon is installed in
#      the prefix's hicolor theme, scalable and symbolic, and librsvg renders both;
#   2. the unit and the activation file name the same tonearmd;
#   3. make uninstall with the same PREFIX leaves no file behind.
#   Tests/Packaging/install-test.sh        (run through `make install-test`, which builds first)
# Ends with "N passed, N failed"; exits 1 when a check failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
make="${MAKE:-make}"
source Tests/Packaging/checks.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/tonearm-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix="$work/opt/tonearm"

"$make" --no-print-directory install PREFIX="$prefix" DESTDIR= >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; echo "install-test: make install failed"; exit 1; }
desktop="$prefix/share/applications/tonearm.desktop"
key() { sed -n "s/^$1=//p" "$desktop"; }
check "the desktop entry is installed" test -f "$desktop"
check "Exec is the installed tonearmd, by its absolute path, with --open %U" \
    test "$(key Exec)" = "$prefix/bin/tonearmd --open %U"
check "TryExec is the installed tonearmd, by its absolute path" test "$(key TryExec)" = "$prefix/bin/tonearmd"
check "the program Exec and TryExec name exists, is executable and runs" \
    bash -c "exec=\$(sed -n 's/^TryExec=//p' '$desktop') && [ -x \"\$exec\" ] && env -i \"\$exec\" --help | grep -q -- --open"
check "desktop-file-validate accepts the installed entry" desktop-file-validate "$desktop"
icons="$prefix/share/icons/hicolor"
check "Icon names the installed hicolor icon, scalable and symbolic" bash -c \
    "[ \"\$(sed -n 's/^Icon=//p' '$desktop')\" = tonearm ] && [ -f '$icons/scalable/apps/tonearm.svg' ] &&
     [ -f '$icons/symbolic/apps/tonearm-symbolic.svg' ]"
check "librsvg renders the installed icons (128 and 16 px)" bash -c \
    "rsvg-convert -w 128 -h 128 '$icons/scalable/apps/tonearm.svg' >'$work/icon.png' &&
     rsvg-convert -w 16 -h 16 '$icons/symbolic/apps/tonearm-symbolic.svg' >'$work/symbolic.png'"
check "the unit runs the installed tonearmd" grep -qx "ExecStart=$prefix/bin/tonearmd" "$prefix/lib/systemd/user/tonearmd.service"
check "the activation file starts the installed tonearmd" \
    grep -qx "Exec=$prefix/bin/tonearmd" "$prefix/share/dbus-1/services/org.mpris.MediaPlayer2.tonearm.service"

"$make" --no-print-directory uninstall PREFIX="$prefix" DESTDIR= >"$work/uninstall.log" 2>&1 ||
    { cat "$work/uninstall.log"; echo "install-test: make uninstall failed"; exit 1; }
check "make uninstall leaves no file" bash -c "left=\$(find '$prefix' -type f) && [ -z \"\$left\" ] || { echo \"\$left\"; exit 1; }"
summary install-test
