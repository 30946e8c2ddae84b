#!/bin/bash
# Plays the demo through tonearmd. Without a sound device, tonearmd says so and plays silently
# in real time.
set -eu
demo="$1"
bin=$(swift build --show-bin-path)
exec "$bin/tonearmd" "$demo"
