/* The time-to-play floor of `make bench` (Benchmarks/bench.py): how long bare playbin takes from
 * being made until its audio sink gets the first buffer. Each repetition builds a fresh playbin
 * (as tonearmd builds one per load) with the given audio sink, sets the URI, asks for PLAYING and
 * waits for the sink's first buffer; it prints that time in microseconds, one line per repetition,
 * then takes the playbin to NULL. One unmeasured repetition comes first: it loads the plugins
 * that the file needs, as a tonearmd that has played before has them.
 *
 *   cc -O2 -o firstbuffer firstbuffer.c $(pkg-config --cflags --libs gstreamer-1.0)
 *   ./firstbuffer URI REPETITIONS [playbin|playbin3]
 */
#include <gst/gst.h>
#include <stdio.h>
#include <stdlib.h>

static GMutex lock;
static GCond arrived;
static gboolean got_buffer;

static GstPadProbeReturn on_buffer(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    (void)pad; (void)info; (void)data;
    g_mutex_lock(&lock);
    got_buffer = TRUE;
    g_cond_signal(&arrived);
    g_mutex_unlock(&lock);
    return GST_PAD_PROBE_REMOVE;
}

int main(int argc, char **argv) {
    gst_init(&argc, &argv);
    if (argc < 3) {
        fprintf(stderr, "usage: firstbuffer URI REPETITIONS [playbin|playbin3]\n");
        return 2;
    }
    const char *factory = argc > 3 ? argv[3] : "playbin";
    int repetitions = atoi(argv[2]);
    for (int i = -1; i < repetitions; i++) {
        gint64 start = g_get_monotonic_time();
        GstElement *playbin = gst_element_factory_make(factory, NULL);
        GstElement *sink = gst_element_factory_make("fakesink", NULL);
        g_object_set(sink, "sync", TRUE, NULL);
        GstPad *pad = gst_element_get_static_pad(sink, "sink");
        gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, on_buffer, NULL, NULL);
        gst_object_unref(pad);
        g_object_set(playbin, "audio-sink", sink, "uri", argv[1], NULL);
        got_buffer = FALSE;
        if (gst_element_set_state(playbin, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
            fprintf(stderr, "firstbuffer: %s does not play\n", argv[1]);
            return 1;
        }
        g_mutex_lock(&lock);
        gint64 deadline = g_get_monotonic_time() + 10 * G_TIME_SPAN_SECOND;
        while (!got_buffer)
            if (!g_cond_wait_until(&arrived, &lock, deadline)) {
                fprintf(stderr, "firstbuffer: no buffer within 10 s\n");
                return 1;
            }
        g_mutex_unlock(&lock);
        if (i >= 0) {
            printf("%" G_GINT64_FORMAT "\n", g_get_monotonic_time() - start);
            fflush(stdout);
        }
        gst_element_set_state(playbin, GST_STATE_NULL);
        gst_object_unref(playbin);
    }
    return 0;
}
