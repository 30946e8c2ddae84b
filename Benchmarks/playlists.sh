#!/bin/bash
# ActivatePlaylist of a playlist of N entries (default 10,000): the time from the call until its
# reply (by then the file was read and parsed off the serving queue, the queue replaced and
# TrackListReplaced sent), the median of RUNS runs, beside Peer.Ping made the same way (busctl's
# own start-up is in both: Ping is the floor). make bench runs it (Benchmarks/bench.py: the row
# "ActivatePlaylist 10,000 entries, median ms", target under 1000 ms) and reads its last lines.
#
#   Benchmarks/playlists.sh [TONEARMD] [N] [RUNS]
#
# TONEARMD defaults to .build/release/tonearmd (swift build -c release --product tonearmd), else
# .build/debug/tonearmd. Needs dbus-daemon, busctl and gst-launch-1.0.
set -eu
tonearmd="${1:-}"
[ -n "$tonearmd" ] || { [ -x .build/release/tonearmd ] && tonearmd=.build/release/tonearmd || tonearmd=.build/debug/tonearmd; }
entries="${2:-10000}"
runs="${3:-5}"
work=$(mktemp -d /tmp/tonearm-bench-playlists.XXXXXX)
trap 'kill $daemon $bus 2>/dev/null || true; wait 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/music/Playlists" "$work/files" "$work/state"
gst-launch-1.0 -q audiotestsrc num-buffers=20 ! audio/x-raw,rate=44100,channels=2 ! wavenc ! filesink location="$work/seed.wav"
{
    echo "#EXTM3U"
    for i in $(seq 1 "$entries"); do
        ln "$work/seed.wav" "$work/files/track $i.wav"
        echo "$work/files/track $i.wav"
    done
} > "$work/music/Playlists/big.m3u8"
dbus-daemon --session --nofork --print-address=3 --address="unix:path=$work/bus" 3>"$work/address" &
bus=$!
while [ ! -s "$work/address" ]; do sleep 0.05; done
address=$(head -n 1 "$work/address")
DBUS_SESSION_BUS_ADDRESS="$address" XDG_STATE_HOME="$work/state" XDG_MUSIC_DIR="$work/music" \
    "$tonearmd" --audio-sink 'fakesink sync=true' --log-level warning 2>"$work/tonearmd.err" &
daemon=$!
name=org.mpris.MediaPlayer2.tonearm
for _ in $(seq 1 200); do busctl --address="$address" status "$name" >/dev/null 2>&1 && break; sleep 0.05; done
path=$(busctl --address="$address" call "$name" /org/mpris/MediaPlayer2 org.mpris.MediaPlayer2.Playlists \
    GetPlaylists uusb 0 10 Alphabetical false | grep -o '"/io/github/tonearm/Playlist/[0-9]*"' | head -n 1 | tr -d '"')
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1e6 }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
activate=() ping=()
for _ in $(seq 1 "$runs"); do
    start=$(date +%s%N)
    busctl --address="$address" --timeout=60 call "$name" /org/mpris/MediaPlayer2 org.mpris.MediaPlayer2.Playlists \
        ActivatePlaylist o "$path"
    end=$(date +%s%N)
    activate+=("$(ms "$start" "$end")")
    start=$(date +%s%N)
    busctl --address="$address" call "$name" /org/mpris/MediaPlayer2 org.freedesktop.DBus.Peer Ping
    end=$(date +%s%N)
    ping+=("$(ms "$start" "$end")")
done
tracks=$(busctl --address="$address" get-property "$name" /org/mpris/MediaPlayer2 org.mpris.MediaPlayer2.TrackList Tracks \
    | awk '{ print $2 }')
echo "tonearmd: $tonearmd"
echo "playlist: $entries entries; queue after ActivatePlaylist: $tracks tracks"
echo "ActivatePlaylist: median $(printf '%s\n' "${activate[@]}" | median) ms of ${runs} (${activate[*]})"
echo "Ping (floor):     median $(printf '%s\n' "${ping[@]}" | median) ms (${ping[*]})"
