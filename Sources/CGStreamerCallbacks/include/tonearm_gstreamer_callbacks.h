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

/// Unlinks each temporary file an element inside `pipeline` announces in its "temp-location"
/// property as soon as it is made (downloadbuffer, queue2). Returns the handler's id.
gulong tonearm_unlink_temp_files(GstElement *pipeline);

/// Makes an X error (BadWindow when the window a sink draws into went away: the window program
/// died, or closed before the sink reached NULL) a logged warning instead of the end of the
/// process: Xlib's default handler calls exit(). Call once a sink that uses libX11 exists (it
/// loaded the library); false when no libX11 is loaded.
gboolean tonearm_survive_x_errors(void);

/// Posts a "tonearm-segment" element message from `element` each time a SEGMENT event enters its
/// sink pad, with the event's "seqnum" (the seek's that made it): for a sink, the moment the data
/// of a new segment (a segment seek's) is next to be rendered, the previous segment's last buffer
/// having been. False when it has no sink pad.
gboolean tonearm_watch_segments(GstElement *element);

#endif
