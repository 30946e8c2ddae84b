#!/bin/bash
# Install what Tonearm needs to build, run and test on Debian 12 (bookworm),
# starting from a minimal system that has only a Swift toolchain.
#
# Fast path: when every package is already installed this only runs dpkg-query
# and exits, so `make run` is quick the second time.
#
# Usage: packaging/install-build-deps.sh [--check] [--list]
#   --check  exit 1 (and name them) if packages are missing; install nothing
#   --list   print the package list and exit
#
# Runs apt-get as root, or through sudo when not root.
set -eu

PACKAGES=(
    # build
    pkg-config
    libgstreamer1.0-dev
    libgstreamer-plugins-base1.0-dev
    libdbus-1-dev
    libsqlite3-dev
    # the video window (tonearm-video): SDL2 2.26's headers and library (Debian's, through the CSDL2 target)
    libsdl2-dev
    # the sound server's default sink, which GStreamer 1.22's pulse device provider never follows
    # (the engine's DefaultSinkWatch, through the CPulse target)
    libpulse-dev
    # the Swift 6.3 toolchain does not start without it
    libncurses6
    # run: GStreamer plugins and tools (gst-launch-1.0, gst-inspect-1.0, gst-discoverer-1.0)
    gstreamer1.0-plugins-base
    gstreamer1.0-plugins-good
    gstreamer1.0-plugins-bad
    gstreamer1.0-plugins-ugly
    gstreamer1.0-libav
    gstreamer1.0-tools
    gstreamer1.0-plugins-base-apps
    # the saved state (resume after a restart): SQLite 3
    libsqlite3-0
    # real audio sinks: without one, autoaudiosink silently falls back to a fake sink
    gstreamer1.0-pulseaudio
    gstreamer1.0-alsa
    # souphttpsrc (plugins-good 1.22) dlopens libsoup at run time; https needs TLS and CAs
    libsoup-3.0-0
    glib-networking
    ca-certificates
    # tests: a private bus (dbus-daemon, dbus-run-session), dbus-send/dbus-monitor (dbus-bin),
    # MPRIS clients (playerctl, gdbus from libglib2.0-bin, busctl from systemd),
    # and python3 for the test HTTP server; python3-jeepney for the fuzzer and the soak test
    # (make fuzz, make soak), python3-matplotlib for the soak test's plot
    dbus-daemon
    dbus-bin
    playerctl
    libglib2.0-bin
    systemd
    python3
    python3-jeepney
    python3-matplotlib
    # tests of the saved state: sqlite3 writes a file from a newer schema (setpriv and prlimit
    # come with util-linux, which every Debian has)
    sqlite3
    # the state store's outages (StoreOutageTests): EIO from a FUSE file system of the test's own
    # (Tests/PySupport/eio_fs.py); an ext4 image that the kernel turns read-only (mkfs.ext4, e2fsck);
    # tmpfs, loop mounts and findmnt (mount, util-linux)
    python3-fusepy
    e2fsprogs
    mount
    # video: ximagesink, the sink of the software path (plugins-base's videoconvertscale scales for
    # it) where OpenGL is a software renderer or does not open (gstreamer1.0-x)
    gstreamer1.0-x
    # video: glimagesink, which scales the video to the window on a GPU (gravity, picture-in-picture)
    gstreamer1.0-gl
    # video tests (VideoWindowTests): an X server of the test's own (Xvfb), a window manager
    # (openbox), xdotool and x11-utils (xprop, xwininfo) to read the windows
    xvfb
    openbox
    xdotool
    x11-utils
    # video tests (VideoInputTests): an XDND drag source of the test's own (Tests/PySupport/xdnd_source.py)
    python3-xlib
    # video tests under Wayland (VideoWaylandTests): sway's headless backend as the compositor, run as
    # an unprivileged user, and XWayland, the X server that Tonearm's (X11) window gets there
    sway
    xwayland
    # sound tests (SoundServerTests, PulseAudioServerTests, CrossfadeTests): sound servers of the test's own with
    # null sinks: PipeWire as a GNOME desktop runs it (the daemon, its session manager wireplumber and its
    # Pulse server pipewire-pulse) and PulseAudio; pactl/parec (pulseaudio-utils) to plug devices in and out
    # and to hear their monitors on either; tests only (a desktop has its own sound server; tonearmd needs
    # only gstreamer1.0-pulseaudio)
    pulseaudio
    pulseaudio-utils
    pipewire
    pipewire-pulse
    wireplumber
    # Snapcast tests (SnapcastTests): a snapserver and a snapclient of the test's own on 127.0.0.1,
    # each with its own config and ports (the packages' system services are not needed; tonearmd
    # only connects to a snapserver the user runs)
    snapserver
    snapclient
    # sandbox tests (SandboxTests): gdb attaches to the live engine and makes the calls its
    # system-call filter refuses from inside it (ptrace of tonearmd, process_vm_readv...)
    gdb
    # man pages and the Debian package: man renders the generated pages in the tests;
    # dpkg-shlibdeps finds the package's library dependencies (make deb)
    man-db
    dpkg-dev
    # the desktop entry: desktop-file-validate checks it as installed (make install-test), with the
    # rules GNOME's and XFCE's menus apply
    desktop-file-utils
    # the icons: rsvg-convert renders them with librsvg, as GTK and GNOME Shell do (the tests)
    librsvg2-bin
)

mode=install
for arg in "$@"; do
    case "$arg" in
        --check) mode=check ;;
        --list) printf '%s\n' "${PACKAGES[@]}"; exit 0 ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install-build-deps: unknown argument: $arg" >&2; exit 2 ;;
    esac
done

missing=()
for pkg in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null || true)
    case "$status" in
        *"install ok installed"*) ;;
        *) missing+=("$pkg") ;;
    esac
done

if [ "${#missing[@]}" -eq 0 ]; then
    exit 0
fi

if [ "$mode" = check ]; then
    echo "install-build-deps: missing: ${missing[*]}" >&2
    exit 1
fi

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        echo "install-build-deps: need root to install: ${missing[*]}" >&2
        echo "install-build-deps: run this script as root, or install sudo" >&2
        exit 1
    fi
}

echo "install-build-deps: installing: ${missing[*]}" >&2
as_root env DEBIAN_FRONTEND=noninteractive apt-get update
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
