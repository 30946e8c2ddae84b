#!/bin/bash
# Checks the Debian package that `make deb` built (`make deb-test` builds it first):
#   1. dpkg -x into a temporary root: exactly the expected files, owned by root, the unit, the
#      activation file and the desktop entry naming /usr/bin/tonearmd, its icon in hicolor, man pages and completions that say what the
#      parsers accept, and programs that run from there with no Swift toolchain libraries;
#   2. its control fields: GStreamer's plugin packages and a session bus among the dependencies;
#   3. as root (unless DEB_TEST_INSTALL=0): apt-get installs it, man finds its pages by name, a client call on a fresh session
#      bus starts tonearmd through D-Bus activation and it plays a generated file; systemd-analyze
#      accepts the unit, and a bus with systemd activation asks for tonearmd.service; then dpkg
#      removes it and none of its files is left.
#   Tests/Packaging/deb-test.sh [PACKAGE.deb]      (default: the newest .build/deb/tonearm_*.deb)
# Ends with "N passed, N failed"; exits 1 when a check failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
package="${1:-$(ls -t .build/deb/tonearm_*.deb 2>/dev/null | head -n 1)}"
[ -n "$package" ] && [ -f "$package" ] || { echo "deb-test: no package; run make deb first" >&2; exit 2; }
package=$(realpath "$package")
source Tests/Packaging/checks.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/tonearm-deb-test.XXXXXX")
bus_pid=""
cleanup() {
    [ -n "$bus_pid" ] && kill "$bus_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

echo "package: $package"
root="$work/root"
dpkg -x "$package" "$root"
expected="usr/bin/tonearm
usr/bin/tonearm-engine
usr/bin/tonearm-video
usr/bin/tonearmd
usr/lib/systemd/user/tonearmd.service
usr/share/applications/tonearm.desktop
usr/share/bash-completion/completions/tonearm
usr/share/bash-completion/completions/tonearmd
usr/share/dbus-1/interfaces/io.github.tonearm.Player1.xml
usr/share/dbus-1/interfaces/org.mpris.MediaPlayer2.Player.xml
usr/share/dbus-1/interfaces/org.mpris.MediaPlayer2.Playlists.xml
usr/share/dbus-1/interfaces/org.mpris.MediaPlayer2.TrackList.xml
usr/share/dbus-1/interfaces/org.mpris.MediaPlayer2.xml
usr/share/dbus-1/services/org.mpris.MediaPlayer2.tonearm.service
usr/share/doc/tonearm/copyright
usr/share/fish/vendor_completions.d/tonearm.fish
usr/share/fish/vendor_completions.d/tonearmd.fish
usr/share/icons/hicolor/scalable/apps/tonearm.svg
usr/share/icons/hicolor/symbolic/apps/tonearm-symbolic.svg
usr/share/man/man1/tonearm.1.gz
usr/share/man/man1/tonearmd.1.gz
usr/share/man/man7/tonearm-dbus.7.gz
usr/share/zsh/vendor-completions/_tonearm
usr/share/zsh/vendor-completions/_tonearmd"
check "the files are exactly the expected ones" \
    diff <(echo "$expected") <(cd "$root" && find . \( -type f -o -type l \) -printf '%P\n' | LC_ALL=C sort)
check "every entry is owned by root" bash -c "! dpkg-deb -c '$package' | awk '{print \$2}' | grep -v '^root/root$'"
check "the programs are executable, the rest is not" bash -c \
    "[ \"\$(find '$root' -type f -perm -u+x -printf '%P\n' | sort | tr '\n' ' ')\" = 'usr/bin/tonearm usr/bin/tonearm-engine usr/bin/tonearm-video usr/bin/tonearmd ' ]"
check "the unit runs /usr/bin/tonearmd" grep -qx 'ExecStart=/usr/bin/tonearmd' "$root/usr/lib/systemd/user/tonearmd.service"
check "the activation file starts /usr/bin/tonearmd, or the unit under systemd" bash -c \
    "grep -qx 'Exec=/usr/bin/tonearmd' '$root/usr/share/dbus-1/services/org.mpris.MediaPlayer2.tonearm.service' &&
     grep -qx 'SystemdService=tonearmd.service' '$root/usr/share/dbus-1/services/org.mpris.MediaPlayer2.tonearm.service' &&
     grep -qx 'Name=org.mpris.MediaPlayer2.tonearm' '$root/usr/share/dbus-1/services/org.mpris.MediaPlayer2.tonearm.service'"
check "the desktop entry runs /usr/bin/tonearmd, by its absolute path" bash -c \
    "grep -qx 'Exec=/usr/bin/tonearmd --open %U' '$root/usr/share/applications/tonearm.desktop' &&
     grep -qx 'TryExec=/usr/bin/tonearmd' '$root/usr/share/applications/tonearm.desktop'"
check "the desktop entry's Icon is the package's hicolor icon, scalable and symbolic" bash -c \
    "icon=\$(sed -n 's/^Icon=//p' '$root/usr/share/applications/tonearm.desktop') && [ \"\$icon\" = tonearm ] &&
     [ -f '$root/usr/share/icons/hicolor/scalable/apps/'\$icon.svg ] && [ -f '$root/usr/share/icons/hicolor/symbolic/apps/'\$icon-symbolic.svg ]"
check "no Swift toolchain library is needed" bash -c \
    "for p in tonearm tonearmd; do out=\$(ldd '$root/usr/bin/'\$p) || exit 1; echo \"\$out\" | grep -E 'not found|libswift|libFoundation|libdispatch|/opt/swift|swift/linux' && exit 1; done; true"
# Foundation proper would bring FoundationInternationalization and ICU's data (37 MB of each program)
check "neither program carries ICU's data or FoundationInternationalization" bash -c \
    "for p in tonearm tonearmd; do grep -q -a -e icudt -e FoundationInternationalization '$root/usr/bin/'\$p && exit 1; done; true"
check "tonearm --version runs from the package with an empty environment" bash -c \
    "[ \"\$(env -i '$root/usr/bin/tonearm' --version)\" = \"\$(dpkg-deb -f '$package' Version)\" ]"
check "tonearmd --help runs from the package" bash -c "env -i '$root/usr/bin/tonearmd' --help | grep -q -- --audio-sink"
check "the man pages name every command of the parser" bash -c \
    "page=\$(zcat '$root/usr/share/man/man1/tonearm.1.gz'); echo \"\$page\" | grep -q '^.TH \"TONEARM\" \"1\"' &&
     for c in play pause toggle stop next prev seek volume mute unmute loop shuffle rate retry add queue jump remove move clear status watch daemon; do
       echo \"\$page\" | grep -q \"^.SS \$c\\b\" || { echo \"no \$c in tonearm.1\"; exit 1; }; done &&
     zcat '$root/usr/share/man/man1/tonearmd.1.gz' | grep -q 'audio\\\\-sink'"
check "man renders both pages" bash -c "MANWIDTH=80 man -l '$root/usr/share/man/man1/tonearm.1.gz' | grep -q 'tonearm watch\\|^   watch' &&
     MANWIDTH=80 man -l '$root/usr/share/man/man1/tonearmd.1.gz' | grep -q 'instance'"
check "tonearm-dbus(7) renders and names the extension's members" bash -c \
    "page=\$(MANWIDTH=80 man -l '$root/usr/share/man/man7/tonearm-dbus.7.gz') &&
     for name in 'INTERFACE io.github.tonearm.Player1' 'ItemStatus s (read-only)' 'SeekTo(x position' 'PlayedToEnd(o trackid)' \
                 'io.github.tonearm.Error.FileNotFound'; do
       echo \"\$page\" | grep -qF \"\$name\" || { echo \"no \$name in tonearm-dbus.7\"; exit 1; }; done"
check "the bash completion parses and offers the commands" bash -c \
    "bash -n '$root/usr/share/bash-completion/completions/tonearm' && grep -q 'watch' '$root/usr/share/bash-completion/completions/tonearm' &&
     source '$root/usr/share/bash-completion/completions/tonearm' && complete -p tonearm"
check "the zsh and fish completions name the commands" bash -c \
    "grep -q 'watch' '$root/usr/share/zsh/vendor-completions/_tonearm' && grep -q '#compdef tonearm' '$root/usr/share/zsh/vendor-completions/_tonearm' &&
     grep -q 'watch' '$root/usr/share/fish/vendor_completions.d/tonearm.fish'"
depends=$(dpkg-deb -f "$package" Depends)
check "depends on GStreamer, its base and good plugins, libdbus and a session bus" bash -c \
    "for d in libgstreamer1.0-0 libgstreamer-plugins-base1.0-0 libdbus-1-3 gstreamer1.0-plugins-base gstreamer1.0-plugins-good dbus-session-bus; do
       echo '$depends' | grep -q \"\$d\" || { echo \"Depends lacks \$d: $depends\"; exit 1; }; done"

install_test() {
    if dpkg-query -W -f='${Status}' tonearm 2>/dev/null | grep -q 'install ok installed'; then
        echo "FAILED  tonearm is already installed on this machine: not touching it"
        failed=$((failed + 1))
        return
    fi
    check "apt-get installs it with its dependencies" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$package"
    check "dpkg lists its files" bash -c "dpkg -L tonearm | grep -qx /usr/bin/tonearmd"
    # issue 41 asks for `man tonearm-dbus` after installing the package, by name, not man -l of a file
    check "man finds each page by name once installed (man tonearm-dbus, man tonearmd, man tonearm)" bash -c \
        "[ \"\$(man -w tonearm-dbus)\" = /usr/share/man/man7/tonearm-dbus.7.gz ] &&
         [ \"\$(man -w tonearmd)\" = /usr/share/man/man1/tonearmd.1.gz ] && [ \"\$(man -w 1 tonearm)\" = /usr/share/man/man1/tonearm.1.gz ] &&
         MANWIDTH=80 man tonearm-dbus 2>/dev/null | grep -qF 'INTERFACE io.github.tonearm.Player1'"
    # a saved state and playlists of this run only: the service the bus activates inherits the
    # bus's environment, and would otherwise resume what an earlier run left in ~/.local/state
    export XDG_STATE_HOME="$work/state" XDG_MUSIC_DIR="$work/music"
    # a fresh session bus with the standard configuration, which reads /usr/share/dbus-1/services
    dbus-daemon --session --fork --nopidfile --print-address=3 --print-pid=4 3>"$work/address" 4>"$work/pid"
    bus_pid=$(head -n 1 "$work/pid")
    export DBUS_SESSION_BUS_ADDRESS=$(head -n 1 "$work/address")
    check "nothing owns the name before the call" bash -c \
        "! dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner string:org.mpris.MediaPlayer2.tonearm | grep -q 'boolean true'"
    check "a client call starts the service through D-Bus activation" bash -c "/usr/bin/tonearm status | grep -q '^status *Stopped'"
    check "the service is the installed /usr/bin/tonearmd" bash -c \
        "pid=\$(dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetConnectionUnixProcessID string:org.mpris.MediaPlayer2.tonearm | awk '/uint32/ {print \$2}') &&
         [ \"\$(readlink /proc/\$pid/exe)\" = /usr/bin/tonearmd ] && echo \$pid >'$work/daemon'"
    gst-launch-1.0 -q audiotestsrc num-buffers=200 ! audio/x-raw,rate=44100,channels=2 \
        ! taginject 'tags="title=(string)Packaged"' ! vorbisenc ! oggmux ! filesink location="$work/packaged.ogg"
    check "it plays a file (tonearm play, then watch sees it playing)" bash -c \
        "/usr/bin/tonearm play '$work/packaged.ogg' && timeout 20 /usr/bin/tonearm watch | grep -m 1 -q '\"status\":\"playing\".*\"title\":\"Packaged\"\\|\"title\":\"Packaged\".*\"status\":\"playing\"'"
    kill "$bus_pid"
    bus_pid=""
    daemon_pid=$(cat "$work/daemon" 2>/dev/null)
    check "the service ends with its bus" bash -c "[ -z '$daemon_pid' ] || timeout 15 tail --pid='$daemon_pid' -f /dev/null"
    # systemd's way: the unit as systemd reads it, and a bus run with --systemd-activation, which
    # asks org.freedesktop.systemd1 for the activation file's SystemdService= unit instead of
    # running Exec= (no systemd user manager runs here: a script stands in for it, see its header)
    mkdir -m 700 "$work/runtime"
    export XDG_STATE_HOME="$work/state-systemd"  # nothing to resume: the service starts stopped
    check "systemd accepts the installed user unit (systemd-analyze verify --user)" \
        env XDG_RUNTIME_DIR="$work/runtime" systemd-analyze verify --user /usr/lib/systemd/user/tonearmd.service
    dbus-daemon --session --systemd-activation --fork --nopidfile --print-address=3 --print-pid=4 3>"$work/address" 4>"$work/pid"
    bus_pid=$(head -n 1 "$work/pid")
    export DBUS_SESSION_BUS_ADDRESS=$(head -n 1 "$work/address")
    coproc activator { exec /usr/bin/python3 Tests/Packaging/systemd_activator.py /usr/lib/systemd/user "$work/units"; }
    read -r -t 10 ready <&"${activator[0]}"
    check "under systemd activation a client call asks for tonearmd.service, whose ExecStart serves it" bash -c \
        "[ '${ready:-}' = ready ] && /usr/bin/tonearm status | grep -q '^status *Stopped' && [ \"\$(cat '$work/units')\" = tonearmd.service ] ||
         { cat '$work/units' '$work/units.out'; exit 1; }"
    check "the unit's BusName is the activation file's Name" bash -c \
        "grep -qx 'BusName=org.mpris.MediaPlayer2.tonearm' /usr/lib/systemd/user/tonearmd.service &&
         grep -qx 'Name=org.mpris.MediaPlayer2.tonearm' /usr/share/dbus-1/services/org.mpris.MediaPlayer2.tonearm.service"
    kill "$bus_pid"
    bus_pid=""
    kill "$activator_PID" 2>/dev/null
    unset DBUS_SESSION_BUS_ADDRESS
    check "dpkg removes it" dpkg -r tonearm
    check "none of its files is left" bash -c \
        "for f in \$(echo '$expected'); do [ -e /\$f ] && { echo \"left: /\$f\"; exit 1; }; done;
         ! dpkg-query -W -f='\${Status}' tonearm 2>/dev/null | grep -q 'ok installed'"
    dpkg -P tonearm >/dev/null 2>&1
    check "purged, not even its documentation is left" bash -c "[ ! -e /usr/share/doc/tonearm ]"
}
if [ "$(id -u)" -eq 0 ] && [ "${DEB_TEST_INSTALL:-1}" != 0 ]; then
    install_test
else
    echo "(not root, or DEB_TEST_INSTALL=0: the package was not installed)"
fi
summary deb-test
