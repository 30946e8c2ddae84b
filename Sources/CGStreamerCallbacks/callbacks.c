// GStreamer callbacks that run on streaming threads (a typefinder, four pad probes, a deep-notify
// handler): C, so that no Swift runs on those threads. Declared in
// include/tonearm_gstreamer_callbacks.h; Sources/GStreamer calls the functions there.
#include "tonearm_gstreamer_callbacks.h"
#include <gst/video/videooverlay.h>
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

// A typefind function is a C callback on a streaming thread. A DSF file (Sony's "DSF File Format
// Specification" 1.01) opens with a "DSD " chunk whose 64-bit little-endian size is 28, followed
// by its "fmt " chunk. The caps are gst-libav's, so its avdemux_dsf takes the stream.
static void tonearm_dsf_type_find(GstTypeFind *find, gpointer caps) {
    const guint8 *head = gst_type_find_peek(find, 0, 32);
    if (head != NULL && memcmp(head, "DSD ", 4) == 0 && GST_READ_UINT64_LE(head + 4) == 28 &&
        memcmp(head + 28, "fmt ", 4) == 0)
        gst_type_find_suggest(find, GST_TYPE_FIND_MAXIMUM, (GstCaps *) caps);
}
// gst_type_find_register takes a C function pointer; the factory keeps its own reference to the
// possible caps, the function's data holds the other.
gboolean tonearm_register_dsf_type_find(guint rank) {
    GstCaps *caps = gst_caps_new_empty_simple("application/x-gst-av-dsf");
    return gst_type_find_register(NULL, "tonearm_dsf", rank, tonearm_dsf_type_find, "dsf", caps, caps,
                                  (GDestroyNotify) gst_mini_object_unref);
}

// A pad probe is a C callback on a streaming thread: written here, it only compares timestamps and
// posts an element message, so no Swift runs on that thread. The watch belongs to the probe.
typedef struct {
    GstElement *element;  // not referenced: it owns the pad, and so outlives the probe
    GstClockTime threshold;
    GstClockTime expected;
    GstSegment segment;
} TonearmGapWatch;

static GstPadProbeReturn tonearm_gap_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    TonearmGapWatch *watch = (TonearmGapWatch *)data;
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
        GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
        GstClockTime pts = GST_BUFFER_PTS(buffer);
        if (GST_CLOCK_TIME_IS_VALID(watch->expected) && GST_CLOCK_TIME_IS_VALID(pts)
            && pts > watch->expected + watch->threshold && watch->segment.format == GST_FORMAT_TIME) {
            guint64 start = gst_segment_to_stream_time(&watch->segment, GST_FORMAT_TIME, watch->expected);
            guint64 end = gst_segment_to_stream_time(&watch->segment, GST_FORMAT_TIME, pts);
            // outside the segment a time has no stream time (GST_CLOCK_TIME_NONE): nothing to tell
            if (GST_CLOCK_TIME_IS_VALID(start) && GST_CLOCK_TIME_IS_VALID(end) && end > start) {
                GstStructure *gap = gst_structure_new("tonearm-gap", "start", G_TYPE_UINT64, start, "end", G_TYPE_UINT64, end, NULL);
                gst_element_post_message(watch->element, gst_message_new_element(GST_OBJECT(watch->element), gap));
            }
        }
        watch->expected = GST_CLOCK_TIME_IS_VALID(pts) && GST_BUFFER_DURATION_IS_VALID(buffer)
            ? pts + GST_BUFFER_DURATION(buffer) : GST_CLOCK_TIME_NONE;
    } else if (info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
        GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
        switch (GST_EVENT_TYPE(event)) {
        case GST_EVENT_SEGMENT:
            gst_event_copy_segment(event, &watch->segment);
            watch->expected = GST_CLOCK_TIME_NONE;
            break;
        case GST_EVENT_STREAM_START:
        case GST_EVENT_FLUSH_STOP:
            watch->expected = GST_CLOCK_TIME_NONE;
            break;
        default:
            break;
        }
    }
    return GST_PAD_PROBE_OK;
}

// Watches the buffers entering `element`'s sink pad for a jump forward in time longer than
// `threshold` nanoseconds (a stretch of the stream that never came), and posts a "tonearm-gap"
// element message from `element` with the gap's "start" and "end" in stream time. False when
// the element has no sink pad.
gboolean tonearm_watch_gaps(GstElement *element, guint64 threshold) {
    GstPad *pad = gst_element_get_static_pad(element, "sink");
    if (pad == NULL) return FALSE;
    TonearmGapWatch *watch = g_new0(TonearmGapWatch, 1);
    watch->element = element;
    watch->threshold = threshold;
    watch->expected = GST_CLOCK_TIME_NONE;
    gst_segment_init(&watch->segment, GST_FORMAT_UNDEFINED);
    gst_pad_add_probe(pad, (GstPadProbeType)(GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM),
                      tonearm_gap_probe, watch, g_free);
    gst_object_unref(pad);
    return TRUE;
}
// Like the gap watch: C on the streaming thread, which only adds and compares byte counts.
typedef struct {
    GstElement *element;  // not referenced: it owns the pad
    guint steps;
    guint64 position;
    guint64 length;
    guint64 next;  // G_MAXUINT64: nothing to tell (size unknown, or the end told)
} TonearmDownloadWatch;

static void tonearm_download_post(TonearmDownloadWatch *watch) {
    guint64 step = watch->length / watch->steps;
    watch->next = watch->position >= watch->length ? G_MAXUINT64 : (watch->position / step + 1) * step;
    GstStructure *progress = gst_structure_new("tonearm-download", "position", G_TYPE_UINT64, watch->position,
                                               "length", G_TYPE_UINT64, watch->length, NULL);
    gst_element_post_message(watch->element, gst_message_new_element(GST_OBJECT(watch->element), progress));
}

static GstPadProbeReturn tonearm_download_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    TonearmDownloadWatch *watch = (TonearmDownloadWatch *)data;
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
        // told at the next buffer, whose probe runs once the previous push returned: the element
        // downstream (downloadbuffer writes in its chain function) then holds every byte told
        if (watch->position >= watch->next) tonearm_download_post(watch);
        watch->position += gst_buffer_get_size(GST_PAD_PROBE_INFO_BUFFER(info));
    } else if (info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
        GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
        if (GST_EVENT_TYPE(event) == GST_EVENT_SEGMENT) {
            // gstbasesrc.c: a source that knows its size in bytes puts it in the segment's
            // duration, and a range request (a resume, a seek) starts the segment at its offset
            const GstSegment *segment;
            gst_event_parse_segment(event, &segment);
            gboolean sized = segment->format == GST_FORMAT_BYTES && segment->duration != (guint64)-1
                && segment->duration >= watch->steps && segment->start < segment->duration;
            watch->position = sized ? segment->start : 0;
            watch->length = sized ? segment->duration : 0;
            guint64 step = sized ? segment->duration / watch->steps : 0;
            watch->next = sized ? (segment->start / step + 1) * step : G_MAXUINT64;
        } else if (GST_EVENT_TYPE(event) == GST_EVENT_EOS && watch->length > 0 && watch->next != G_MAXUINT64) {
            tonearm_download_post(watch);
        }
    }
    return GST_PAD_PROBE_OK;
}

// Watches the bytes leaving `source`, an HTTP source of a known size, and posts a
// "tonearm-download" element message from it (fields "position" and "length", bytes) each time
// the download passes the next of `steps` equal parts of the whole, and at its end: pushed from
// the streaming thread, at most `steps` + 1 messages for a download from start to end. False (and
// nothing watched) when `source` is not an http or https source or has no src pad.
gboolean tonearm_watch_download(GstElement *source, guint steps) {
    if (steps == 0 || !GST_IS_URI_HANDLER(source)) return FALSE;
    gchar *uri = gst_uri_handler_get_uri(GST_URI_HANDLER(source));
    gboolean http = uri != NULL && (g_str_has_prefix(uri, "http://") || g_str_has_prefix(uri, "https://"));
    g_free(uri);
    if (!http) return FALSE;
    GstPad *pad = gst_element_get_static_pad(source, "src");
    if (pad == NULL) return FALSE;
    TonearmDownloadWatch *watch = g_new0(TonearmDownloadWatch, 1);
    watch->element = source;
    watch->steps = steps;
    watch->next = G_MAXUINT64;
    gst_pad_add_probe(pad, (GstPadProbeType)(GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM),
                      tonearm_download_probe, watch, g_free);
    gst_object_unref(pad);
    return TRUE;
}
// Runs on whichever thread opened the file (a state change, a streaming thread): C, no Swift.
static void tonearm_unlink_temp_location(GstObject *pipeline, GstObject *object, GParamSpec *pspec, gpointer data) {
    gchar *location = NULL;
    g_object_get(object, "temp-location", &location, NULL);
    if (location != NULL) unlink(location);
    g_free(location);
}

// Unlinks each temporary file an element inside `pipeline` announces in its "temp-location"
// property (downloadbuffer, queue2: "The temp-location property will be used to notify the
// application of the allocated filename", gstdownloadbuffer.c) as soon as it is made: the
// element keeps writing and reading it through its descriptor, and the file goes with that
// descriptor, even when the process is killed. (Its own temp-remove at close then finds no file,
// a GST_WARNING in the debug log.) g_signal_connect is a macro.
gulong tonearm_unlink_temp_files(GstElement *pipeline) {
    return g_signal_connect(pipeline, "deep-notify::temp-location", G_CALLBACK(tonearm_unlink_temp_location), NULL);
}

// Xlib's types, as far as the handler reads them (X11/Xlib.h: XErrorEvent), so that this target
// needs no libX11 headers or link: the library is loaded by the video sink, and found with dlsym.
typedef struct {
    int type;
    void *display;
    unsigned long resourceid;
    unsigned long serial;
    unsigned char error_code;
    unsigned char request_code;
    unsigned char minor_code;
} TonearmXErrorEvent;
typedef int (*TonearmXErrorHandler)(void *display, TonearmXErrorEvent *event);

// On the thread that made the X request (a streaming thread of the sink): C, no Swift.
static int tonearm_x_error(void *display, TonearmXErrorEvent *event) {
    GST_WARNING("X error %u (request %u) on resource 0x%lx: ignored, the service goes on",
                event->error_code, event->request_code, event->resourceid);
    return 0;
}

gboolean tonearm_survive_x_errors(void) {
    // the libX11 the sink's plugin loaded: GStreamer opens plugins RTLD_LOCAL, so their libraries'
    // symbols are not in the global scope; RTLD_NOLOAD finds it without ever loading it
    void *x11 = dlopen("libX11.so.6", RTLD_NOW | RTLD_NOLOAD);
    if (x11 == NULL) return FALSE;
    TonearmXErrorHandler (*set)(TonearmXErrorHandler) =
        (TonearmXErrorHandler (*)(TonearmXErrorHandler)) dlsym(x11, "XSetErrorHandler");
    if (set != NULL) set(tonearm_x_error);
    dlclose(x11);  // the sink's own reference keeps it loaded
    return set != NULL;
}

// GstGL's calls, found with dlsym in the libgstgl-1.0 that glimagesink's plugin loaded, so that
// tonearmd links no GL library of its own (an audio-only service maps none). GstGLDisplay and
// GstGLContext are GstObjects; only their pointers pass through here.
typedef gpointer (*TonearmGLDisplayNew)(const gchar *name);
typedef void (*TonearmSetGLDisplay)(GstContext *context, gpointer display);
typedef gpointer (*TonearmGLContextNew)(gpointer display);
typedef gboolean (*TonearmGLContextCreate)(gpointer context, gpointer other, GError **error);
typedef void (*TonearmGLThreadFunc)(gpointer context, gpointer data);
typedef void (*TonearmGLThreadAdd)(gpointer context, TonearmGLThreadFunc func, gpointer data);
typedef gpointer (*TonearmGLGetProcAddress)(gpointer context, const gchar *name);
typedef const guchar *(*TonearmGLGetString)(guint name);

// What the renderer probe hands to the context's thread: glGetString's address, and the name read.
typedef struct {
    TonearmGLGetProcAddress get_proc_address;
    gchar *renderer;
} TonearmGLRendererRead;

// On the GL context's own thread, with the context current (gst_gl_context_thread_add): C, no Swift.
static void tonearm_gl_read_renderer(gpointer context, gpointer data) {
    TonearmGLRendererRead *read = data;
    TonearmGLGetString get_string = (TonearmGLGetString) read->get_proc_address(context, "glGetString");
    // GL_RENDERER is 0x1F01 (GL/gl.h): not included, so that no GL header is needed here
    const guchar *name = get_string != NULL ? get_string(0x1F01) : NULL;
    if (name != NULL) read->renderer = g_strdup((const gchar *)name);
}

gboolean tonearm_gl_sink_use_display(GstElement *sink, const gchar *display_name, gboolean probe, gchar **renderer) {
    void *gl = dlopen("libgstgl-1.0.so.0", RTLD_NOW | RTLD_NOLOAD);
    if (gl == NULL) return FALSE;
    TonearmGLDisplayNew display_new = (TonearmGLDisplayNew) dlsym(gl, "gst_gl_display_x11_new");
    TonearmSetGLDisplay set_display = (TonearmSetGLDisplay) dlsym(gl, "gst_context_set_gl_display");
    TonearmGLContextNew context_new = (TonearmGLContextNew) dlsym(gl, "gst_gl_context_new");
    TonearmGLContextCreate context_create = (TonearmGLContextCreate) dlsym(gl, "gst_gl_context_create");
    TonearmGLThreadAdd thread_add = (TonearmGLThreadAdd) dlsym(gl, "gst_gl_context_thread_add");
    TonearmGLGetProcAddress get_proc_address = (TonearmGLGetProcAddress) dlsym(gl, "gst_gl_context_get_proc_address");
    dlclose(gl);  // the plugin's own reference keeps it loaded
    if (display_new == NULL || set_display == NULL || context_new == NULL || context_create == NULL) return FALSE;
    gpointer display = display_new(display_name);  // XOpenDisplay: NULL when it cannot be opened
    if (display == NULL) return FALSE;
    gboolean usable = TRUE;
    if (probe) {
        // a context made and dropped at once: its hidden window is never mapped
        gpointer context = context_new(display);
        GError *error = NULL;
        usable = context != NULL && context_create(context, NULL, &error);
        if (error != NULL) {
            GST_WARNING("OpenGL on %s: %s", display_name, error->message);
            g_error_free(error);
        }
        // which renderer the context got (glGetString runs only where the context is current: on
        // its thread), so that the caller can tell a software rasterizer from a GPU
        if (usable && renderer != NULL && thread_add != NULL && get_proc_address != NULL) {
            TonearmGLRendererRead read = {get_proc_address, NULL};
            thread_add(context, tonearm_gl_read_renderer, &read);  // returns once it ran
            *renderer = read.renderer;
        }
        if (context != NULL) gst_object_unref(context);
    }
    if (usable) {
        // the sink's display, asked as a context at NULL -> READY (gst_gl_ensure_element_data);
        // "gst.gl.GLDisplay" is GST_GL_DISPLAY_CONTEXT_TYPE
        GstContext *context = gst_context_new("gst.gl.GLDisplay", TRUE);
        set_display(context, display);
        gst_element_set_context(sink, context);
        gst_context_unref(context);
    }
    gst_object_unref(display);
    return usable;
}

typedef gpointer (*TonearmGLContextGetWindow)(gpointer context);
typedef void (*TonearmGLWindowQueueResize)(gpointer window);

void tonearm_gl_sink_queue_resize(GstElement *sink) {
    if (g_object_class_find_property(G_OBJECT_GET_CLASS(sink), "context") == NULL) return;
    gpointer context = NULL;
    g_object_get(sink, "context", &context, NULL);
    if (context == NULL) return;
    void *gl = dlopen("libgstgl-1.0.so.0", RTLD_NOW | RTLD_NOLOAD);
    if (gl != NULL) {
        TonearmGLContextGetWindow get_window = (TonearmGLContextGetWindow) dlsym(gl, "gst_gl_context_get_window");
        TonearmGLWindowQueueResize queue_resize = (TonearmGLWindowQueueResize) dlsym(gl, "gst_gl_window_queue_resize");
        dlclose(gl);
        gpointer window = get_window != NULL ? get_window(context) : NULL;
        if (window != NULL) {
            if (queue_resize != NULL) queue_resize(window);
            gst_object_unref(window);
        }
    }
    gst_object_unref(context);
}

// Like the gap watch, but for events only: C on the streaming thread, which only posts a message.
static GstPadProbeReturn tonearm_segment_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    GstElement *element = (GstElement *)data;  // not referenced: it owns the pad
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    if (GST_EVENT_TYPE(event) == GST_EVENT_SEGMENT) {
        // the seqnum of the seek that made the segment: which seek's data this is
        GstStructure *segment = gst_structure_new("tonearm-segment", "seqnum", G_TYPE_UINT, gst_event_get_seqnum(event), NULL);
        gst_element_post_message(element, gst_message_new_element(GST_OBJECT(element), segment));
    }
    return GST_PAD_PROBE_OK;
}

// The buffers still to come before the redraw, per sink: 2 after CAPS, counted down by each
// buffer; on the streaming thread only, before the sink's chain (which takes its flow lock: not held here).
static GstPadProbeReturn tonearm_redraw_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    (void)pad;
    gint *left = (gint *)data;
    if (info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
        if (GST_EVENT_TYPE(GST_PAD_PROBE_INFO_EVENT(info)) == GST_EVENT_CAPS) *left = 2;
        return GST_PAD_PROBE_OK;
    }
    if (*left > 0 && --*left == 0) {
        GstElement *sink = GST_ELEMENT(gst_pad_get_parent(pad));
        if (sink != NULL) {
            if (GST_IS_VIDEO_OVERLAY(sink)) gst_video_overlay_expose(GST_VIDEO_OVERLAY(sink));
            gst_object_unref(sink);
        }
    }
    return GST_PAD_PROBE_OK;
}

gboolean tonearm_redraw_after_caps(GstElement *sink) {
    GstPad *pad = gst_element_get_static_pad(sink, "sink");
    if (pad == NULL) return FALSE;
    gint *left = g_new0(gint, 1);
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM | GST_PAD_PROBE_TYPE_BUFFER, tonearm_redraw_probe, left, g_free);
    gst_object_unref(pad);
    return TRUE;
}

gboolean tonearm_watch_segments(GstElement *element) {
    GstPad *pad = gst_element_get_static_pad(element, "sink");
    if (pad == NULL) return FALSE;
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, tonearm_segment_probe, element, NULL);
    gst_object_unref(pad);
    return TRUE;
}

// pulsesink notifies `volume` and then `mute` from its streaming thread, at the next write after
// any change of its stream at the server (its own settings among them: gst-plugins-good 1.22
// pulsesink.c, gst_pulseringbuffer_commit): only a message here; reading the property asks the
// server, which the engine's queue does.
static void tonearm_stream_levels_notified(GObject *sink, GParamSpec *spec, gpointer data) {
    (void)spec;
    (void)data;
    GstElement *element = GST_ELEMENT(sink);
    gst_element_post_message(element, gst_message_new_element(GST_OBJECT(element), gst_structure_new_empty("tonearm-stream-levels")));
}

gboolean tonearm_watch_stream_levels(GstElement *sink) {
    if (g_object_class_find_property(G_OBJECT_GET_CLASS(sink), "volume") == NULL) return FALSE;
    // connected for the element's life: GObject drops the handler with it
    g_signal_connect(sink, "notify::volume", G_CALLBACK(tonearm_stream_levels_notified), NULL);
    return TRUE;
}

// Every element of one factory made from now on in this process starts with one int property
// at a value of Tonearm's: its class's `constructed` (run once per new instance, after its
// defaults) is wrapped to set it. For elements that no `source-setup` reaches: those an adaptive
// demuxer makes for its segments and for its playlist's updates (gsturidownloader.c makes them
// outside any bin).
typedef struct {
    void (*constructed)(GObject *object);  // the class's own
    const gchar *property;
    gint value;
} TonearmIntDefault;

static GQuark tonearm_int_default_quark(void) { return g_quark_from_static_string("tonearm-int-default"); }

static void tonearm_constructed_with_default(GObject *object) {
    GType type = G_OBJECT_TYPE(object);
    TonearmIntDefault *wrap = NULL;
    for (; type != 0 && wrap == NULL; type = g_type_parent(type))
        wrap = g_type_get_qdata(type, tonearm_int_default_quark());
    if (wrap == NULL) return;  // not reached: only classes with the qdata get this function
    if (wrap->constructed != NULL) wrap->constructed(object);
    g_object_set(object, wrap->property, wrap->value, NULL);
}

gboolean tonearm_set_int_default(const gchar *factory_name, const gchar *property, gint value) {
    GstElementFactory *factory = gst_element_factory_find(factory_name);
    if (factory == NULL) return FALSE;
    GstPluginFeature *loaded = gst_plugin_feature_load(GST_PLUGIN_FEATURE(factory));
    gst_object_unref(factory);
    if (loaded == NULL) return FALSE;
    GType type = gst_element_factory_get_element_type(GST_ELEMENT_FACTORY(loaded));
    gst_object_unref(loaded);
    if (type == 0) return FALSE;
    GObjectClass *klass = g_type_class_ref(type);  // kept for the process: its vtable is changed
    GParamSpec *spec = g_object_class_find_property(klass, property);
    if (spec == NULL || G_PARAM_SPEC_VALUE_TYPE(spec) != G_TYPE_INT || !(spec->flags & G_PARAM_WRITABLE)) return FALSE;
    TonearmIntDefault *wrap = g_type_get_qdata(type, tonearm_int_default_quark());
    if (wrap == NULL) {
        wrap = g_new0(TonearmIntDefault, 1);  // kept for the process, with the class
        wrap->constructed = klass->constructed;
        g_type_set_qdata(type, tonearm_int_default_quark(), wrap);
        klass->constructed = tonearm_constructed_with_default;
    }
    wrap->property = g_intern_string(property);
    wrap->value = value;
    return TRUE;
}
