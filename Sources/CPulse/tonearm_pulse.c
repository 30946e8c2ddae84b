// libpulse's functions, found with dlsym in libpulse.so.0 (tonearm_pulse.h says why).
#include "tonearm_pulse.h"

#include <dlfcn.h>
#include <pthread.h>

static struct {
    pa_threaded_mainloop *(*threaded_mainloop_new)(void);
    void (*threaded_mainloop_free)(pa_threaded_mainloop *);
    int (*threaded_mainloop_start)(pa_threaded_mainloop *);
    void (*threaded_mainloop_stop)(pa_threaded_mainloop *);
    pa_mainloop_api *(*threaded_mainloop_get_api)(pa_threaded_mainloop *);
    pa_context *(*context_new)(pa_mainloop_api *, const char *);
    void (*context_unref)(pa_context *);
    int (*context_connect)(pa_context *, const char *, pa_context_flags_t, const pa_spawn_api *);
    void (*context_disconnect)(pa_context *);
    pa_context_state_t (*context_get_state)(const pa_context *);
    void (*context_set_state_callback)(pa_context *, pa_context_notify_cb_t, void *);
    void (*context_set_subscribe_callback)(pa_context *, pa_context_subscribe_cb_t, void *);
    pa_operation *(*context_subscribe)(pa_context *, pa_subscription_mask_t, pa_context_success_cb_t, void *);
    pa_operation *(*context_get_server_info)(pa_context *, pa_server_info_cb_t, void *);
    void (*operation_unref)(pa_operation *);
} pulse;

static int opened;
static pthread_once_t once = PTHREAD_ONCE_INIT;

// dlsym returns an object pointer; POSIX has it converted to a function pointer through memory
#define FIND(field) \
    do { \
        void *found = dlsym(library, "pa_" #field); \
        if (found == NULL) return; \
        *(void **)(&pulse.field) = found; \
    } while (0)

static void open_pulse(void) {
    // kept open for the process's life, as pulsesink keeps it once it loaded it
    void *library = dlopen("libpulse.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return;
    FIND(threaded_mainloop_new);
    FIND(threaded_mainloop_free);
    FIND(threaded_mainloop_start);
    FIND(threaded_mainloop_stop);
    FIND(threaded_mainloop_get_api);
    FIND(context_new);
    FIND(context_unref);
    FIND(context_connect);
    FIND(context_disconnect);
    FIND(context_get_state);
    FIND(context_set_state_callback);
    FIND(context_set_subscribe_callback);
    FIND(context_subscribe);
    FIND(context_get_server_info);
    FIND(operation_unref);
    opened = 1;
}

int tonearm_pulse_open(void) {
    pthread_once(&once, open_pulse);
    return opened;
}

pa_threaded_mainloop *tonearm_pa_threaded_mainloop_new(void) { return pulse.threaded_mainloop_new(); }
void tonearm_pa_threaded_mainloop_free(pa_threaded_mainloop *m) { pulse.threaded_mainloop_free(m); }
int tonearm_pa_threaded_mainloop_start(pa_threaded_mainloop *m) { return pulse.threaded_mainloop_start(m); }
void tonearm_pa_threaded_mainloop_stop(pa_threaded_mainloop *m) { pulse.threaded_mainloop_stop(m); }
pa_mainloop_api *tonearm_pa_threaded_mainloop_get_api(pa_threaded_mainloop *m) { return pulse.threaded_mainloop_get_api(m); }
pa_context *tonearm_pa_context_new(pa_mainloop_api *api, const char *name) { return pulse.context_new(api, name); }
void tonearm_pa_context_unref(pa_context *c) { pulse.context_unref(c); }
int tonearm_pa_context_connect(pa_context *c, const char *server, pa_context_flags_t flags, const pa_spawn_api *api) {
    return pulse.context_connect(c, server, flags, api);
}
void tonearm_pa_context_disconnect(pa_context *c) { pulse.context_disconnect(c); }
pa_context_state_t tonearm_pa_context_get_state(const pa_context *c) { return pulse.context_get_state(c); }
void tonearm_pa_context_set_state_callback(pa_context *c, pa_context_notify_cb_t cb, void *userdata) {
    pulse.context_set_state_callback(c, cb, userdata);
}
void tonearm_pa_context_set_subscribe_callback(pa_context *c, pa_context_subscribe_cb_t cb, void *userdata) {
    pulse.context_set_subscribe_callback(c, cb, userdata);
}
pa_operation *tonearm_pa_context_subscribe(pa_context *c, pa_subscription_mask_t m, pa_context_success_cb_t cb, void *userdata) {
    return pulse.context_subscribe(c, m, cb, userdata);
}
pa_operation *tonearm_pa_context_get_server_info(pa_context *c, pa_server_info_cb_t cb, void *userdata) {
    return pulse.context_get_server_info(c, cb, userdata);
}
void tonearm_pa_operation_unref(pa_operation *o) { pulse.operation_unref(o); }
