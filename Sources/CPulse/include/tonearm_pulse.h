#ifndef TONEARM_PULSE_H
#define TONEARM_PULSE_H
#include <pulse/pulseaudio.h>

/* libpulse for the PulseAudio target (the server's default sink, which GStreamer 1.22's pulse device
 * provider never follows), opened with dlopen when the engine first watches a sound server: linked
 * at start, libpulse brought 25 libraries into every engine (libsndfile and its codecs, libsystemd,
 * libdbus, Xlib), 3 MiB of RSS for a process that plays to no sound server (make bench, fakesink
 * rows). Where a sound server is used, pulsesink has libpulse loaded anyway. Each function below is
 * libpulse's of the same name without `tonearm_`, found with dlsym. */

/* Opens libpulse.so.0 and finds the functions below, once per process; 1 when they are all there,
 * else 0 (and none may be called). */
int tonearm_pulse_open(void);

pa_threaded_mainloop *tonearm_pa_threaded_mainloop_new(void);
void tonearm_pa_threaded_mainloop_free(pa_threaded_mainloop *m);
int tonearm_pa_threaded_mainloop_start(pa_threaded_mainloop *m);
void tonearm_pa_threaded_mainloop_stop(pa_threaded_mainloop *m);
pa_mainloop_api *tonearm_pa_threaded_mainloop_get_api(pa_threaded_mainloop *m);
pa_context *tonearm_pa_context_new(pa_mainloop_api *api, const char *name);
void tonearm_pa_context_unref(pa_context *c);
int tonearm_pa_context_connect(pa_context *c, const char *server, pa_context_flags_t flags, const pa_spawn_api *api);
void tonearm_pa_context_disconnect(pa_context *c);
pa_context_state_t tonearm_pa_context_get_state(const pa_context *c);
void tonearm_pa_context_set_state_callback(pa_context *c, pa_context_notify_cb_t cb, void *userdata);
void tonearm_pa_context_set_subscribe_callback(pa_context *c, pa_context_subscribe_cb_t cb, void *userdata);
pa_operation *tonearm_pa_context_subscribe(pa_context *c, pa_subscription_mask_t m, pa_context_success_cb_t cb, void *userdata);
pa_operation *tonearm_pa_context_get_server_info(pa_context *c, pa_server_info_cb_t cb, void *userdata);
void tonearm_pa_operation_unref(pa_operation *o);

#endif
