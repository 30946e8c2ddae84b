#ifndef TONEARM_CPULSE_SHIM_H
#define TONEARM_CPULSE_SHIM_H
#include <pulse/pulseaudio.h>

/* libpulse for the PulseAudio target: the server's default sink (GStreamer 1.22's pulse device
 * provider never follows it). Every function used imports as is; add a static inline function here
 * only for what Swift cannot import, with a one-line comment on why. */

#endif
