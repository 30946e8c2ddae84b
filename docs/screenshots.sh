#!/bin/bash
# Makes docs/gnome-shell-media-card.png and docs/gnome-shell-app-grid.png: real screenshots of
# Debian 12's GNOME Shell 43, rendered by gnome-shell itself (its org.gnome.Shell.Screenshot
# D-Bus API), run headless on a virtual monitor, with tonearmd playing on the same session bus.
#
# Run as root on a Debian 12 machine without a desktop: it installs Debian packages, copies the
# icons and the desktop file into /usr/local/share, and runs the session as an unprivileged
# user "shot" (created if missing). Nothing else is needed; the display stays virtual.
#   docs/screenshots.sh            (TONEARMD=/path/to/tonearmd to use another binary)
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
TONEARMD=${TONEARMD:-$REPO/.build/debug/tonearmd}
W=${SHOT_DIR:-/tmp/tonearm-shot}           # scratch space, readable by the user "shot"
TITLE=${TITLE:-Tonearm demo}
ARTIST=${ARTIST:-Generated tone}
MONITOR=${MONITOR:-1920x1080}

# 1. Debian packages: GNOME Shell 43, GStreamer for the test tone, gdbus, Pillow to shrink PNGs.
pkgs="gnome-shell dbus-x11 libglib2.0-bin python3-pil gstreamer1.0-tools
      gstreamer1.0-plugins-base gstreamer1.0-plugins-good librsvg2-common"
# shellcheck disable=SC2086
if ! dpkg -s $pkgs >/dev/null 2>&1; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q $pkgs
fi

# 2. The icons and the launcher, as `make install` would put them (PREFIX=/usr/local), with
#    Exec/TryExec pointing at the binary under test.
install -Dm644 "$REPO/packaging/icons/tonearm.svg" \
    /usr/local/share/icons/hicolor/scalable/apps/tonearm.svg
install -Dm644 "$REPO/packaging/icons/tonearm-symbolic.svg" \
    /usr/local/share/icons/hicolor/symbolic/apps/tonearm-symbolic.svg
install -d /usr/local/share/applications
sed -e "s|^Exec=/usr/bin/tonearmd|Exec=$TONEARMD|" -e "s|^TryExec=.*|TryExec=$TONEARMD|" \
    "$REPO/packaging/tonearm.desktop" > /usr/local/share/applications/tonearm.desktop
# (/usr/local/share/icons/hicolor has no index.theme, so there is no icon cache to update:
#  GTK falls back to reading the directory.)

# 3. A user for the session, a fresh home and runtime directory, a tagged 5-minute test tone.
id shot >/dev/null 2>&1 || useradd -m -s /bin/bash shot
rm -rf "$W" && install -d -m 755 "$W" && install -d -m 700 -o shot "$W/run" "$W/home"
gst-launch-1.0 -q audiotestsrc num-buffers=30000 samplesperbuffer=441 \
    ! audio/x-raw,rate=44100,channels=2 \
    ! taginject "tags=\"title=(string)\\\"$TITLE\\\",artist=(string)\\\"$ARTIST\\\",album=(string)Generated\"" \
    ! vorbisenc ! oggmux ! filesink location="$W/demo.ogg"
chmod 644 "$W/demo.ogg"

# 4. The session: a private session bus (dbus-run-session), a private stand-in for the system
#    bus (gnome-shell 43 exits if it cannot connect to one when /run/systemd/seats exists; on
#    it login1, polkit, upower ... are simply absent), and gnome-shell on a virtual monitor.
#    --unsafe-mode lets org.gnome.Shell.Eval and the Screenshot API answer gdbus.
cat > "$W/session.sh" <<'EOF'
#!/bin/bash
export XDG_SESSION_TYPE=wayland XDG_CURRENT_DESKTOP=GNOME
dbus-daemon --session --fork --address="unix:path=$XDG_RUNTIME_DIR/system_bus_socket" \
    --print-pid=3 3>"$XDG_RUNTIME_DIR/sysbus.pid"
export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$XDG_RUNTIME_DIR/system_bus_socket"
gnome-shell --headless --virtual-monitor "$MONITOR" --wayland --no-x11 --unsafe-mode \
    >"$XDG_RUNTIME_DIR/shell.log" 2>&1 &
echo $! >"$XDG_RUNTIME_DIR/shell.pid"
echo "$DBUS_SESSION_BUS_ADDRESS" >"$XDG_RUNTIME_DIR/bus.env"
wait
kill "$(cat "$XDG_RUNTIME_DIR/sysbus.pid")" 2>/dev/null || true
EOF
chmod 755 "$W/session.sh"

asshot() {
    runuser -u shot -- env -i HOME="$W/home" USER=shot LOGNAME=shot PATH=/usr/bin:/bin \
        XDG_RUNTIME_DIR="$W/run" LANG=C.UTF-8 ${BUS:+DBUS_SESSION_BUS_ADDRESS=$BUS} "$@"
}
cleanup() {
    [ -f "$W/tonearmd.pid" ] && kill "$(cat "$W/tonearmd.pid")" 2>/dev/null || true
    [ -f "$W/run/shell.pid" ] && kill "$(cat "$W/run/shell.pid")" 2>/dev/null || true
    sleep 3   # session.sh then stops the system-bus stand-in; dbus-run-session stops its bus
    [ -f "$W/run/sysbus.pid" ] && kill "$(cat "$W/run/sysbus.pid")" 2>/dev/null || true
    [ -f "$W/session.pid" ] && kill "$(cat "$W/session.pid")" 2>/dev/null || true
    sleep 1
    # bus-activated helpers (gvfs, evolution, ...) normally leave with their bus; stop stragglers
    for pid in $(pgrep -u shot || true); do kill "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

BUS=
setsid runuser -u shot -- env -i HOME="$W/home" USER=shot LOGNAME=shot PATH=/usr/bin:/bin \
    XDG_RUNTIME_DIR="$W/run" LANG=C.UTF-8 MONITOR="$MONITOR" dbus-run-session -- "$W/session.sh" \
    >"$W/session.log" 2>&1 &
echo $! >"$W/session.pid"
for _ in $(seq 60); do [ -s "$W/run/bus.env" ] && break; sleep 1; done
BUS=$(cat "$W/run/bus.env")

ev() {  # evaluate JavaScript in gnome-shell, print the result
    asshot gdbus call --session -d org.gnome.Shell -o /org/gnome/Shell \
        -m org.gnome.Shell.Eval "$1" | sed -n "s/^(true, '\(.*\)')$/\1/p"
}
shot_area() {  # x y w h file: gnome-shell's own screenshot of that area
    asshot gdbus call --session -d org.gnome.Shell.Screenshot -o /org/gnome/Shell/Screenshot \
        -m org.gnome.Shell.Screenshot.ScreenshotArea "$1" "$2" "$3" "$4" false "$5" >/dev/null
}
for _ in $(seq 90); do
    [ "$(ev 'Main.layoutManager._startingUp' 2>/dev/null)" = false ] && break; sleep 1
done
[ "$(ev 'Main.layoutManager._startingUp')" = false ] || { cat "$W/run/shell.log"; exit 1; }

# 5. Tonearm plays the tone on that bus (a silent real-time sink: there is no sound device).
asshot "$TONEARMD" --audio-sink 'fakesink sync=true' "$W/demo.ogg" \
    >"$W/tonearmd.log" 2>&1 &
echo $! >"$W/tonearmd.pid"
for _ in $(seq 30); do
    [ "$(ev 'Main.panel.statusArea.dateMenu._messageList._mediaSection._players.size')" = 1 ] && break
    sleep 1
done
sleep 3

# 6. The media card: leave the overview shown at startup, drop the "Screen Lock disabled"
#    notice (there is no GDM here), open the date menu, grab the panel and the menu.
ev 'Main.overview.hide(); Main.messageTray.getSources().forEach(s => s.destroy())' >/dev/null
sleep 2
ev 'Main.panel.statusArea.dateMenu.menu.open()' >/dev/null
sleep 2
read -r x y w h < <(ev 'let a = Main.panel.statusArea.dateMenu.menu.actor;
    let [x, y] = a.get_transformed_position(); let [w, h] = a.get_transformed_size();
    [Math.round(x), Math.round(y), Math.round(w), Math.round(h)].join(" ")' | tr -d '"')
shot_area "$x" 0 "$w" $((y + h)) "$W/run/media-card.png"
ev 'Main.panel.statusArea.dateMenu.menu.close()' >/dev/null
sleep 1

# 7. The app grid, the pointer resting on Tonearm's launcher (a virtual pointer: real hover);
#    the area from the search entry down to the first row of launchers.
ev 'Main.overview.show(); Main.overview.dash.showAppsButton.checked = true' >/dev/null
sleep 3
read -r x y w h < <(ev 'const Clutter = imports.gi.Clutter;
    const box = a => { let [x, y] = a.get_transformed_position();
        let [w, h] = a.get_transformed_size(); return [x, y, x + w, y + h]; };
    let items = Main.overview._overview.controls._appDisplay._orderedItems;
    let icon = items.find(i => i.id === "tonearm.desktop");
    let [ix0, iy0, ix1, iy1] = box(icon);
    global._shotPointer = Clutter.get_default_backend().get_default_seat()
        .create_virtual_device(Clutter.InputDeviceType.POINTER_DEVICE);
    global._shotPointer.notify_absolute_motion(global.get_current_time(),
        (ix0 + ix1) / 2, (iy0 + iy1) / 2);
    let row = items.map(box).filter(b => b[1] === iy0);
    let search = box(Main.overview._overview.controls._searchEntryBin);
    let mid = global.stage.width / 2;
    let half = Math.max(mid - Math.min(...row.map(b => b[0])),
        Math.max(...row.map(b => b[2])) - mid) + 16;
    let x0 = mid - half, x1 = mid + half;
    let y0 = Math.max(search[1] - 12, Main.panel.height), y1 = iy1 + 16;
    [x0, y0, x1 - x0, y1 - y0].map(Math.round).join(" ")' | tr -d '"')
sleep 2
shot_area "$x" "$y" "$w" "$h" "$W/run/app-grid.png"

# The card's player resolves to our launcher (gnome-shell activates it when the card is clicked).
echo "media card player: $(ev 'let p = [...Main.panel.statusArea.dateMenu._messageList
    ._mediaSection._players.values()][0]; let id = p._mprisProxy.DesktopEntry + ".desktop";
    let app = imports.gi.Shell.AppSystem.get_default().lookup_app(id);
    `${p.trackTitle} / ${p.trackArtists} / ${id} -> ${app ? app.get_name() : "no app"}`')"

# 8. Palette PNGs in docs/.
install -d "$REPO/docs"
/usr/bin/python3 - "$W/run" "$REPO/docs" <<'EOF'
import sys
from PIL import Image
src, dst = sys.argv[1:]
for a, b in (("media-card", "gnome-shell-media-card"), ("app-grid", "gnome-shell-app-grid")):
    im = Image.open(f"{src}/{a}.png").convert("RGB")
    im.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE) \
      .save(f"{dst}/{b}.png", optimize=True)
EOF
ls -l "$REPO/docs/gnome-shell-media-card.png" "$REPO/docs/gnome-shell-app-grid.png"
