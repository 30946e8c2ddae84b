#ifndef TONEARM_CGSTREAMER_SHIM_H
#define TONEARM_CGSTREAMER_SHIM_H
// GStreamer for Swift. Each static inline function below exists because Swift cannot import
// what it wraps: a variadic function (g_object_set/get) or a function-like macro.
#include <gst/gst.h>
#include <gst/pbutils/pbutils.h>
#include <gst/audio/audio.h>
#include <gst/video/video.h>
#include <gst/video/videooverlay.h>

// g_object_set is variadic.
static inline void tonearm_set_string(gpointer object, const char *name, const char *value) {
    g_object_set(object, name, value, NULL);
}
// g_object_set is variadic.
static inline void tonearm_set_int(gpointer object, const char *name, gint value) {
    g_object_set(object, name, value, NULL);
}
// g_object_set is variadic; GstPlayFlags is a flags property, set as its integer value.
static inline void tonearm_set_flags(gpointer object, const char *name, guint value) {
    g_object_set(object, name, value, NULL);
}
// g_object_set is variadic.
static inline void tonearm_set_uint64(gpointer object, const char *name, guint64 value) {
    g_object_set(object, name, value, NULL);
}
// g_object_set is variadic.
static inline void tonearm_set_double(gpointer object, const char *name, gdouble value) {
    g_object_set(object, name, value, NULL);
}
// g_object_set is variadic.
static inline void tonearm_set_bool(gpointer object, const char *name, gboolean value) {
    g_object_set(object, name, value, NULL);
}
// g_object_set is variadic; the object property takes its own reference.
static inline void tonearm_set_object(gpointer object, const char *name, gpointer value) {
    g_object_set(object, name, value, NULL);
}
// g_object_get is variadic.
static inline guint tonearm_get_flags(gpointer object, const char *name) {
    guint value = 0;
    g_object_get(object, name, &value, NULL);
    return value;
}
// g_object_get is variadic.
static inline gdouble tonearm_get_double(gpointer object, const char *name) {
    gdouble value = 0;
    g_object_get(object, name, &value, NULL);
    return value;
}
// g_object_get is variadic.
static inline gboolean tonearm_get_bool(gpointer object, const char *name) {
    gboolean value = FALSE;
    g_object_get(object, name, &value, NULL);
    return value;
}
// g_object_get is variadic; the caller owns the returned string (g_free).
static inline gchar *tonearm_get_string(gpointer object, const char *name) {
    gchar *value = NULL;
    g_object_get(object, name, &value, NULL);
    return value;
}
// g_signal_connect is a macro and G_CALLBACK a cast Swift cannot express for this signature.
static inline gulong tonearm_connect_about_to_finish(GstElement *playbin,
                                                     void (*callback)(GstElement *, gpointer),
                                                     gpointer data) {
    return g_signal_connect(playbin, "about-to-finish", G_CALLBACK(callback), data);
}
// g_signal_connect is a macro and G_CALLBACK a cast Swift cannot express for this signature.
static inline gulong tonearm_connect_source_setup(GstElement *playbin,
                                                  void (*callback)(GstElement *, GstElement *, gpointer),
                                                  gpointer data) {
    return g_signal_connect(playbin, "source-setup", G_CALLBACK(callback), data);
}
// G_OBJECT_GET_CLASS is a macro.
static inline gboolean tonearm_has_property(gpointer object, const char *name) {
    return g_object_class_find_property(G_OBJECT_GET_CLASS(object), name) != NULL;
}
// g_object_set is variadic.
static inline void tonearm_set_uint(gpointer object, const char *name, guint value) {
    g_object_set(object, name, value, NULL);
}
// g_signal_connect is a macro and G_CALLBACK a cast Swift cannot express for this signature.
static inline gulong tonearm_connect_pad_added(GstElement *element,
                                               void (*callback)(GstElement *, GstPad *, gpointer),
                                               gpointer data) {
    return g_signal_connect(element, "pad-added", G_CALLBACK(callback), data);
}
// GST_MESSAGE_SRC is a macro.
static inline GstObject *tonearm_message_src(GstMessage *message) {
    return GST_MESSAGE_SRC(message);
}
// GST_MESSAGE_TYPE is a macro.
static inline GstMessageType tonearm_message_type(GstMessage *message) {
    return GST_MESSAGE_TYPE(message);
}
// GST_VALUE_HOLDS_STRUCTURE is a macro over G_TYPE_CHECK_VALUE_TYPE.
static inline gboolean tonearm_value_holds_structure(const GValue *value) { return GST_VALUE_HOLDS_STRUCTURE(value); }
// gst_message_unref is a static inline over a cast Swift does not see through.
static inline void tonearm_message_unref(GstMessage *message) { gst_message_unref(message); }
// gst_query_unref is a static inline over a cast.
static inline void tonearm_query_unref(GstQuery *query) { gst_query_unref(query); }
// gst_tag_list_unref is a static inline over a cast.
static inline void tonearm_tag_list_unref(GstTagList *list) { gst_tag_list_unref(list); }
// gst_sample_unref is a static inline over a cast.
static inline void tonearm_sample_unref(GstSample *sample) { gst_sample_unref(sample); }
// gst_toc_unref is a static inline over a cast.
static inline void tonearm_toc_unref(GstToc *toc) { gst_toc_unref(toc); }
// GST_OBJECT_NAME is a macro; the name stays owned by the object.
static inline const gchar *tonearm_object_name(GstObject *object) { return GST_OBJECT_NAME(object); }
// GST_ELEMENT_GET_CLASS and the factory lookup are macros.
static inline const gchar *tonearm_element_factory_name(GstElement *element) {
    GstElementFactory *factory = gst_element_get_factory(element);
    return factory ? gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(factory)) : NULL;
}
// GST_IS_BIN is a macro.
static inline gboolean tonearm_is_bin(GstElement *element) { return GST_IS_BIN(element); }
// GST_FORMAT_PERCENT_MAX is a macro.
static inline gint64 tonearm_format_percent_max(void) { return GST_FORMAT_PERCENT_MAX; }
// GST_PLUGIN_FEATURE is a cast macro.
static inline void tonearm_feature_set_rank(GstElementFactory *factory, guint rank) {
    gst_plugin_feature_set_rank(GST_PLUGIN_FEATURE(factory), rank);
}
// GST_PLUGIN_FEATURE is a cast macro.
static inline guint tonearm_feature_get_rank(GstElementFactory *factory) {
    return gst_plugin_feature_get_rank(GST_PLUGIN_FEATURE(factory));
}
// GST_PLUGIN_FEATURE is a cast macro; the name stays owned by the factory.
static inline const gchar *tonearm_feature_name(GstElementFactory *factory) {
    return gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(factory));
}
// GST_ELEMENT_FACTORY_TYPE_DECODER is a macro; the caller frees the list (gst_plugin_feature_list_free).
static inline GList *tonearm_decoder_factories(void) {
    return gst_element_factory_list_get_elements(GST_ELEMENT_FACTORY_TYPE_DECODER, GST_RANK_NONE);
}
// --- Discoverer and registry queries ---
// GST_ELEMENT_FACTORY_TYPE_DEMUXER is a macro (a cast of a 64-bit constant).
static inline GstElementFactoryListType tonearm_factory_type_demuxer(void) { return GST_ELEMENT_FACTORY_TYPE_DEMUXER; }
// GST_ELEMENT_FACTORY_TYPE_DECODER is a macro (a cast of a 64-bit constant).
static inline GstElementFactoryListType tonearm_factory_type_decoder(void) { return GST_ELEMENT_FACTORY_TYPE_DECODER; }
// GST_ELEMENT_FACTORY_TYPE_PARSER is a macro (a cast of a 64-bit constant).
static inline GstElementFactoryListType tonearm_factory_type_parser(void) { return GST_ELEMENT_FACTORY_TYPE_PARSER; }
// GST_PLUGIN_FEATURE is a cast macro and gst_plugin_feature_get_name a macro; the name stays owned by the factory.
static inline const gchar *tonearm_type_find_factory_name(GstTypeFindFactory *factory) {
    return gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(factory));
}
// gst_caps_unref is a static inline over a cast.
static inline void tonearm_caps_unref(GstCaps *caps) { gst_caps_unref(caps); }

// GST_IS_TYPE_FIND_FACTORY is a macro.
static inline gboolean tonearm_is_type_find_factory(GstPluginFeature *feature) {
    return GST_IS_TYPE_FIND_FACTORY(feature);
}


// GST_IS_VIDEO_OVERLAY and gst_is_video_overlay_prepare_window_handle_message are macros or take
// the message: true for a video sink's "prepare-window-handle" (posted from a streaming thread).
static inline gboolean tonearm_is_prepare_window_handle(GstMessage *message) {
    return gst_is_video_overlay_prepare_window_handle_message(message) && GST_IS_VIDEO_OVERLAY(GST_MESSAGE_SRC(message));
}
// GST_VIDEO_OVERLAY is a cast macro: hands the message's sink the window to draw into, which must
// happen before the sync handler that got the message returns (gstvideooverlay.c).
static inline void tonearm_set_window_handle(GstMessage *message, guint64 handle) {
    gst_video_overlay_set_window_handle(GST_VIDEO_OVERLAY(GST_MESSAGE_SRC(message)), (guintptr) handle);
}
// GST_VIDEO_SINK_WIDTH/HEIGHT are macros: the size the sink shows the video at, pixel aspect
// applied, set from the caps just before ximagesink and glimagesink ask for a window. 0 when the
// message's source is no GstVideoSink.
static inline void tonearm_video_sink_size(GstMessage *message, gint *width, gint *height) {
    GstObject *src = GST_MESSAGE_SRC(message);
    *width = GST_IS_VIDEO_SINK(src) ? GST_VIDEO_SINK_WIDTH(src) : 0;
    *height = GST_IS_VIDEO_SINK(src) ? GST_VIDEO_SINK_HEIGHT(src) : 0;
}

// GstVideoInfo's fields: a video's size in caps, pixel aspect applied to the width; 0x0 when the
// caps are no raw video.
static inline void tonearm_caps_video_size(GstCaps *caps, gint *width, gint *height) {
    GstVideoInfo info;
    *width = 0;
    *height = 0;
    if (caps != NULL && gst_video_info_from_caps(&info, caps) && info.par_d > 0 && info.par_n > 0) {
        *width = (gint) gst_util_uint64_scale_int(info.width, info.par_n, info.par_d);
        *height = info.height;
    }
}
// GST_BIN_CAST: the size of the video a playbin (or playbin3) decodes, before the sink's scaling:
// the caps on its playsink's "video_sink" pad; 0x0 without video.
static inline void tonearm_playbin_video_size(gpointer playbin, gint *width, gint *height) {
    *width = 0;
    *height = 0;
    GstElement *playsink = gst_bin_get_by_name(GST_BIN_CAST(playbin), "playsink");
    if (playsink == NULL) return;
    GstPad *pad = gst_element_get_static_pad(playsink, "video_sink");
    gst_object_unref(playsink);
    if (pad == NULL) return;
    GstCaps *caps = gst_pad_get_current_caps(pad);
    gst_object_unref(pad);
    tonearm_caps_video_size(caps, width, height);
    if (caps != NULL) gst_caps_unref(caps);
}
// gst_pad_push_event on the sink's pad: a RECONFIGURE upstream, so the stream negotiates its
// size again (ximagesink prefers its window's size: the window was resized).
static inline void tonearm_reconfigure_sink(gpointer sink) {
    GstPad *pad = gst_element_get_static_pad(GST_ELEMENT_CAST(sink), "sink");
    if (pad == NULL) return;
    gst_pad_push_event(pad, gst_event_new_reconfigure());
    gst_object_unref(pad);
}
// GST_IS_VIDEO_OVERLAY and GST_VIDEO_OVERLAY are macros: the sink draws its last frame again
// (its window was resized while paused).
static inline void tonearm_video_overlay_expose(gpointer sink) {
    if (GST_IS_VIDEO_OVERLAY(sink)) gst_video_overlay_expose(GST_VIDEO_OVERLAY(sink));
}

#endif
