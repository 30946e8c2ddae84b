#ifndef TONEARM_GSTREAMER_CALLBACKS_H
#define TONEARM_GSTREAMER_CALLBACKS_H
// What Tonearm runs inside GStreamer's own threads, written in C (callbacks.c): each function
// installs a callback and returns; the callbacks only compare numbers and post element messages.
#include <gst/gst.h>

/// Registers a typefinder for DSF (DSD audio) at `rank`, whose caps are gst-libav's
/// (application/x-gst-av-dsf), so that its avdemux_dsf takes the stream. False when it could not.
gboolean tonearm_register_dsf_type_find(guint rank);

/// Watches the buffers entering `element`'s sink pad for a jump forward in time longer than
/// `threshold` nanoseconds (a stretch of the stream that never came), and posts a "tonearm-gap"
/// element message from `element` with the gap's "start" and "end" in stream time. False when
/// the element has no sink pad.
gboolean tonearm_watch_gaps(GstElement *element, guint64 threshold);

/// Watches the bytes leaving `source`, an HTTP source of a known size, and posts a
/// "tonearm-download" element message from it ("position" and "length", bytes) each time the
/// download passes the next of `steps` equal parts of the whole, and at its end. False (and
/// nothing watched) when `source` is not an http or https source or has no src pad.
gboolean tonearm_watch_download(GstElement *source, guint steps);

/// Has every element `factory_name` makes from now on in this process start with its int property
/// `property` at `value` (its class's `constructed` is wrapped; the class stays loaded). For
/// elements made where no signal reaches them. False when the factory, or a writable int property
/// of that name, does not exist.
gboolean tonearm_set_int_default(const gchar *factory_name, const gchar *property, gint value);

/// Unlinks each temporary file an element inside `pipeline` announces in its "temp-location"
/// property as soon as it is made (downloadbuffer, queue2). Returns the handler's id.
gulong tonearm_unlink_temp_files(GstElement *pipeline);

/// Makes an X error (BadWindow when the window a sink draws into went away: the window program
/// died, or closed before the sink reached NULL) a logged warning instead of the end of the
/// process: Xlib's default handler calls exit(). Call once a sink that uses libX11 exists (it
/// loaded the library); false when no libX11 is loaded.
gboolean tonearm_survive_x_errors(void);

/// Gives `sink` (a glimagesink, made: its plugin loaded libgstgl) the X display `display_name`
/// as its GL display (a GstContext), so that it opens that display rather than $DISPLAY. With
/// `probe`, first makes and drops a GL context there: false (and nothing set) when OpenGL cannot
/// open on it, or the display cannot be opened, or libgstgl is not loaded. With `probe` and
/// `renderer`, `*renderer` becomes the context's GL_RENDERER (g_free it), or NULL when unread.
gboolean tonearm_gl_sink_use_display(GstElement *sink, const gchar *display_name, gboolean probe, gchar **renderer);

/// Has a glimagesink lay its picture out again at its next draw (gst_gl_window_queue_resize on
/// its context's window): it reads force-aspect-ratio only when its window is resized. Nothing
/// for another sink, or before the sink has a GL context.
void tonearm_gl_sink_queue_resize(GstElement *sink);

/// The audio filter's gain stage, a `volume` element, in audio_filters.c: its volume is the level
/// `OutputLevels` gives it times the ReplayGain factor of the stream passing through it now. A probe
/// on its sink pad forgets the gains at each stream-start, reads REPLAYGAIN_* tags and Opus R128_*
/// comments from tag events, and sets the factor they give (album or track gain, plus the pre-amp,
/// capped by the peak so that nothing clips; 1 for an untagged stream or with ReplayGain off) in the
/// stream's own order, so a gapless next stream's factor starts with its first sample.
/// Returns a reference for the caller (`tonearm_replay_gain_release`); NULL without a sink pad.
typedef struct TonearmReplayGain TonearmReplayGain;
TonearmReplayGain *tonearm_replay_gain_attach(GstElement *volume);
/// ReplayGain on (album mode, the pre-amp in dB) or off for the stream playing now; applied at once.
void tonearm_replay_gain_set(TonearmReplayGain *gain, gboolean enabled, gboolean album_mode, gdouble pre_amp);
/// Album mode (0 or 1) for the next stream, taken at its stream-start; -1: none armed.
void tonearm_replay_gain_set_next(TonearmReplayGain *gain, gint next_album_mode);
/// The level the stage applies besides ReplayGain (a linear volume) and its mute; applied at once.
void tonearm_replay_gain_set_level(TonearmReplayGain *gain, gdouble level, gboolean mute);
/// The ReplayGain factor applied now (1 with ReplayGain off).
gdouble tonearm_replay_gain_factor_applied(TonearmReplayGain *gain);
void tonearm_replay_gain_release(gpointer gain);

/// Makes the chain between `head` and `tail` (children of `bin`, head's src linked to tail's sink
/// through what is between) hold exactly `stages` (at most 4, each with one sink and one src pad),
/// in order: added to `bin`, linked and brought to its state, or unlinked, set to NULL and removed.
/// Done when head's src pad is idle (at once when nothing flows, else right after the buffer
/// passing through it), so a playing stream goes on without a gap; the newest wish wins.
void tonearm_filter_chain_set(GstElement *bin, GstElement *head, GstElement *tail, GstElement **stages, guint count);

/// Posts a "tonearm-segment" element message from `element` each time a SEGMENT event enters its
/// sink pad, with the event's "seqnum" (the seek's that made it): for a sink, the moment the data
/// of a new segment (a segment seek's) is next to be rendered, the previous segment's last buffer
/// having been. False when it has no sink pad.
gboolean tonearm_watch_segments(GstElement *element);

/// Has `sink`, an ximagesink, draw again (GstVideoOverlay expose) when the second buffer after a
/// CAPS event reaches it: by then the first image of the new size was drawn, and the expose paints
/// the window's black borders around it. ximagesink paints them only at the first put after new
/// caps or at an expose, and an expose between the two (the window program's, after a resize)
/// drew the previous, larger image and took the borders' turn, leaving its pixels beside the new
/// one (gst-plugins-base ximagesink.c, gst_x_image_sink_ximage_put). False when it has no sink pad.
gboolean tonearm_redraw_after_caps(GstElement *sink);

/// Posts a "tonearm-stream-levels" element message from `sink`, a pulsesink, each time it notifies
/// its `volume` (its stream's volume or mute changed at the sound server: a desktop's per-application
/// slider, or the element's own setting coming back), so that the engine's queue reads them. False
/// (and nothing watched) when the element has no `volume` property.
gboolean tonearm_watch_stream_levels(GstElement *sink);

#endif
