#!/bin/bash
# Makes docs/video-fit.png, docs/video-fill.png, docs/video-stretch.png and docs/video-pip.png:
# Tonearm's video window on a virtual X display (Xvfb with openbox), playing a generated clip
# (the SMPTE bars in a green border) in a window twice as wide as the video's 4:3, once per
# VideoGravity; then picture-in-picture, the whole screen halved. Grabbed with ximagesrc.
# Needs what the tests need (Xvfb, openbox, xdotool, GStreamer's plugins) and a built tree:
#   swift build && docs/video-screenshots.sh
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$REPO/.build/debug}
W=$(mktemp -d /tmp/tonearm-video-shots.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$W"; }
trap cleanup EXIT

# waits (at most 10 s) until "$@" succeeds: X has no event to wait on from outside
until_true() { for _ in $(seq 200); do "$@" >/dev/null 2>&1 && return 0; sleep 0.05; done; echo "timed out: $*" >&2; return 1; }

Xvfb -displayfd 3 -screen 0 1024x768x24 -nolisten tcp 3>"$W/display" 2>/dev/null & pids+=($!)
until_true test -s "$W/display"
export DISPLAY=":$(cat "$W/display")"
openbox >/dev/null 2>&1 & pids+=($!)
until_true xprop -root _NET_SUPPORTING_WM_CHECK
eval "$(dbus-daemon --session --fork --print-address=1 --print-pid=1 | { read -r a; read -r p; echo "export DBUS_SESSION_BUS_ADDRESS=$a; pids+=($p)"; })"
export XDG_STATE_HOME=$W/state XDG_CACHE_HOME=$W/cache
"$BIN/tonearmd" --resume=none --audio-sink fakesink >"$W/tonearmd.log" 2>&1 & pids+=($!)
until_true "$BIN/tonearm" status

gst-launch-1.0 -q videotestsrc pattern=smpte num-buffers=900 ! video/x-raw,width=288,height=216,framerate=30/1 \
    ! videobox top=-12 bottom=-12 left=-16 right=-16 fill=green ! videoconvert ! x264enc speed-preset=ultrafast \
    ! mp4mux ! filesink location="$W/bars.mp4"
"$BIN/tonearm" play "$W/bars.mp4"
until_true xdotool search --onlyvisible --classname tonearm
window=$(xdotool search --onlyvisible --classname tonearm | head -1)
sleep 1  # the first frames, for the pictures only
"$BIN/tonearm" pause
xdotool windowsize "$window" 480 180
until_true sh -c "xwininfo -id $window | grep -q 'Width: 480'"

# the window's client area, as the screen shows it
shot() {
    eval "$(xwininfo -id "$window" | awk -F: '/Absolute upper-left X/ {print "x=" $2} /Absolute upper-left Y/ {print "y=" $2}
                                            /Width/ {print "w=" $2} /Height/ {print "h=" $2}' | tr -d ' ')"
    gst-launch-1.0 -q ximagesrc startx="$x" starty="$y" endx=$((x + w - 1)) endy=$((y + h - 1)) num-buffers=1 use-damage=false show-pointer=false \
        ! videoconvert ! pngenc ! filesink location="$1"
}
for gravity in fit fill stretch; do
    "$BIN/tonearm" gravity "$gravity"
    sleep 3  # the sink draws its last frame again once the window program moved it
    shot "$REPO/docs/video-$gravity.png"
done

"$BIN/tonearm" gravity fit
"$BIN/tonearm" pip on
until_true sh -c "xprop -id $window _NET_WM_STATE | grep -q ABOVE"
sleep 0.5
gst-launch-1.0 -q ximagesrc num-buffers=1 use-damage=false show-pointer=false ! videoconvert ! videoscale ! video/x-raw,width=512,height=384 \
    ! pngenc ! filesink location="$REPO/docs/video-pip.png"
"$BIN/tonearm" pip off
echo "made docs/video-{fit,fill,stretch,pip}.png"
