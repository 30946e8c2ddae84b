// The audio filter's gain stage and optional stage: a pad probe that reads the loudness tags of
// each stream and sets the filter's volume element (ReplayGain times the level OutputLevels gives
// it), and the relinking that puts a stage in
// or takes it out while the stream plays. Both run on streaming threads, so they are C (no Swift
// runs there). Declared in include/tonearm_gstreamer_callbacks.h.
#include "tonearm_gstreamer_callbacks.h"
#include <math.h>
#include <pthread.h>
#include <string.h>

// Our locks are pthread mutexes, not GMutex: GLib on Linux builds GMutex (and so GST_OBJECT_LOCK)
// on bare futexes, which ThreadSanitizer cannot see, so every access they order was reported as
// a race (make test-tsan). pthread's are the same cost and checked.

// MARK: ReplayGain

struct TonearmReplayGain {
    pthread_mutex_t lock;
    GstElement *volume;  // not referenced: it owns the pad the probe is on, and so outlives it
    gboolean enabled;  // ReplayGain on: else the factor is 1
    gboolean album_mode;
    gint next_album_mode;  // -1: none armed for the next stream
    gdouble pre_amp;
    gboolean has_track_gain, has_track_peak, has_album_gain, has_album_peak;
    gdouble track_gain, track_peak, album_gain, album_peak;
    gdouble applied;  // the ReplayGain factor applied now
    gdouble level;  // the rest of the stage's gain, OutputLevels'
    gboolean mute;
    gdouble volume_set;  // what the element's volume and mute were set to last
    gboolean mute_set;
    gchar *stream_id;  // of the stream whose tags these are
};

static void tonearm_replay_gain_clear(gpointer data) {
    TonearmReplayGain *gain = (TonearmReplayGain *) data;
    g_free(gain->stream_id);
    pthread_mutex_destroy(&gain->lock);
}

// The factor for the tags seen so far (called with the lock held). An untagged stream plays as
// it is (the pre-amp is for tagged ones, as MPD's replaygain_preamp); album mode takes the album
// gain when there is one, else the track gain, and track mode the reverse. The peak of the gain
// chosen caps the factor so that the loudest sample stays at or under full scale.
static gdouble tonearm_replay_gain_factor(const TonearmReplayGain *gain) {
    if (!gain->enabled || (!gain->has_track_gain && !gain->has_album_gain)) return 1.0;
    gboolean album = gain->has_album_gain && (gain->album_mode || !gain->has_track_gain);
    gdouble db = (album ? gain->album_gain : gain->track_gain) + gain->pre_amp;
    gdouble factor = pow(10.0, db / 20.0);
    gboolean has_peak = album ? gain->has_album_peak : gain->has_track_peak;
    gdouble peak = album ? gain->album_peak : gain->track_peak;
    if (has_peak && peak > 0.0 && factor * peak > 1.0) factor = 1.0 / peak;
    // the volume element's range is 0..10 (+20 dB)
    return CLAMP(factor, 0.0, 10.0);
}

// Sets the element to the factor times the level (called with the lock held), only for a change:
// on the streaming thread at a stream-start or tags, so that the new factor is applied from the
// next buffer through the element, or on the engine's queue for a new setting or level.
static void tonearm_replay_gain_apply(TonearmReplayGain *gain) {
    gain->applied = tonearm_replay_gain_factor(gain);
    gdouble volume = CLAMP(gain->applied * gain->level, 0.0, 10.0);
    if (volume != gain->volume_set) {
        gain->volume_set = volume;
        g_object_set(gain->volume, "volume", volume, NULL);
    }
    if (gain->mute != gain->mute_set) {
        gain->mute_set = gain->mute;
        g_object_set(gain->volume, "mute", gain->mute, NULL);
    }
}

// An Opus file's R128_TRACK_GAIN / R128_ALBUM_GAIN comment (RFC 7845 5.2.1: a Q7.8 number of dB
// relative to -23 LUFS), which GStreamer 1.22 leaves as an extended comment "KEY=value"
// (gstvorbistag.c maps only REPLAYGAIN_*), as a ReplayGain gain: ReplayGain 2.0 aims at -18 LUFS,
// 5 dB louder (the same +5 as rgvolume since R128 tags were mapped, after 1.22).
static gboolean tonearm_r128_gain(const gchar *comment, const gchar *key, gdouble *gain) {
    gsize length = strlen(key);
    if (g_ascii_strncasecmp(comment, key, length) != 0 || comment[length] != '=') return FALSE;
    gchar *end = NULL;
    gint64 q78 = g_ascii_strtoll(comment + length + 1, &end, 10);
    if (end == comment + length + 1 || q78 < G_MININT16 || q78 > G_MAXINT16) return FALSE;
    *gain = (gdouble) q78 / 256.0 + 5.0;
    return TRUE;
}

// The gains a ReplayGain scanner can write lie well inside +-60 dB; peaks are positive. A float
// decoder's peak above 1 is taken as 1 (its few samples over full scale are inaudible).
static void tonearm_replay_gain_read(TonearmReplayGain *gain, const GstTagList *tags) {
    gdouble value;
    if (gst_tag_list_get_double(tags, GST_TAG_TRACK_GAIN, &value) && fabs(value) < 60.0) {
        gain->track_gain = value;
        gain->has_track_gain = TRUE;
    }
    if (gst_tag_list_get_double(tags, GST_TAG_ALBUM_GAIN, &value) && fabs(value) < 60.0) {
        gain->album_gain = value;
        gain->has_album_gain = TRUE;
    }
    if (gst_tag_list_get_double(tags, GST_TAG_TRACK_PEAK, &value) && value > 0.0) {
        gain->track_peak = MIN(value, 1.0);
        gain->has_track_peak = TRUE;
    }
    if (gst_tag_list_get_double(tags, GST_TAG_ALBUM_PEAK, &value) && value > 0.0) {
        gain->album_peak = MIN(value, 1.0);
        gain->has_album_peak = TRUE;
    }
    guint comments = gst_tag_list_get_tag_size(tags, GST_TAG_EXTENDED_COMMENT);
    for (guint index = 0; index < comments; index++) {
        const gchar *comment = NULL;
        if (!gst_tag_list_peek_string_index(tags, GST_TAG_EXTENDED_COMMENT, index, &comment) || comment == NULL) continue;
        // R128 gains come with no peak: the peak of a ReplayGain tag beside them is of another gain
        if (tonearm_r128_gain(comment, "R128_TRACK_GAIN", &value)) {
            gain->track_gain = value;
            gain->has_track_gain = TRUE;
            gain->has_track_peak = FALSE;
        } else if (tonearm_r128_gain(comment, "R128_ALBUM_GAIN", &value)) {
            gain->album_gain = value;
            gain->has_album_gain = TRUE;
            gain->has_album_peak = FALSE;
        }
    }
}

static GstPadProbeReturn tonearm_replay_gain_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    TonearmReplayGain *gain = (TonearmReplayGain *) data;
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_STREAM_START: {
        // a new stream (a gapless next item) starts with none of the last one's tags: rgvolume
        // forgets them only at EOS, which a gapless switch never sends through the filter. The
        // same stream's stream-start comes again when the chain is relinked (sticky events are
        // sent again to a new peer): that is no new stream.
        const gchar *stream_id = NULL;
        gst_event_parse_stream_start(event, &stream_id);
        pthread_mutex_lock(&gain->lock);
        if (stream_id != NULL && g_strcmp0(stream_id, gain->stream_id) == 0) {
            pthread_mutex_unlock(&gain->lock);
            break;
        }
        g_free(gain->stream_id);
        gain->stream_id = g_strdup(stream_id);
        gain->has_track_gain = gain->has_track_peak = gain->has_album_gain = gain->has_album_peak = FALSE;
        if (gain->next_album_mode >= 0) gain->album_mode = gain->next_album_mode;
        gain->next_album_mode = -1;
        tonearm_replay_gain_apply(gain);
        pthread_mutex_unlock(&gain->lock);
        break;
    }
    case GST_EVENT_TAG: {
        GstTagList *tags = NULL;
        gst_event_parse_tag(event, &tags);
        pthread_mutex_lock(&gain->lock);
        tonearm_replay_gain_read(gain, tags);
        tonearm_replay_gain_apply(gain);
        pthread_mutex_unlock(&gain->lock);
        break;
    }
    default:
        break;
    }
    return GST_PAD_PROBE_OK;
}

TonearmReplayGain *tonearm_replay_gain_attach(GstElement *volume) {
    GstPad *pad = gst_element_get_static_pad(volume, "sink");
    if (pad == NULL) return NULL;
    TonearmReplayGain *gain = g_atomic_rc_box_new0(TonearmReplayGain);
    pthread_mutex_init(&gain->lock, NULL);
    gain->volume = volume;
    gain->next_album_mode = -1;
    gain->applied = gain->level = gain->volume_set = 1.0;
    g_object_set(volume, "volume", 1.0, "mute", FALSE, NULL);
    // the probe holds one reference, the caller the other
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, tonearm_replay_gain_probe,
                      g_atomic_rc_box_acquire(gain), tonearm_replay_gain_release);
    gst_object_unref(pad);
    return gain;
}

void tonearm_replay_gain_set(TonearmReplayGain *gain, gboolean enabled, gboolean album_mode, gdouble pre_amp) {
    pthread_mutex_lock(&gain->lock);
    gain->enabled = enabled;
    gain->album_mode = album_mode;
    gain->pre_amp = pre_amp;
    tonearm_replay_gain_apply(gain);
    pthread_mutex_unlock(&gain->lock);
}

void tonearm_replay_gain_set_next(TonearmReplayGain *gain, gint next_album_mode) {
    pthread_mutex_lock(&gain->lock);
    gain->next_album_mode = next_album_mode < 0 ? -1 : next_album_mode != 0;
    pthread_mutex_unlock(&gain->lock);
}

void tonearm_replay_gain_set_level(TonearmReplayGain *gain, gdouble level, gboolean mute) {
    pthread_mutex_lock(&gain->lock);
    gain->level = level;
    gain->mute = mute;
    tonearm_replay_gain_apply(gain);
    pthread_mutex_unlock(&gain->lock);
}

gdouble tonearm_replay_gain_factor_applied(TonearmReplayGain *gain) {
    pthread_mutex_lock(&gain->lock);
    gdouble factor = gain->applied;
    pthread_mutex_unlock(&gain->lock);
    return factor;
}

void tonearm_replay_gain_release(gpointer gain) {
    g_atomic_rc_box_release_full(gain, tonearm_replay_gain_clear);
}

// MARK: Optional stages

// What a filter's chain between its head and its tail should hold, kept on the head element (so
// that a relink that runs late reads the newest wish, and several pending relinks agree).
#define TONEARM_CHAIN_WANT "tonearm-chain-want"
#define TONEARM_CHAIN_MAX 4

// Held while a wish is set and while a relink runs, whichever thread it runs on (the engine's, or
// a streaming thread when the pad was busy): relinks of one chain never overlap, and each sees
// what the last one did to the elements. One lock for all chains: a relink takes microseconds and
// comes only with a change of settings.
static pthread_mutex_t tonearm_chain_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct {
    GstElement *stages[TONEARM_CHAIN_MAX];
    guint count;
} TonearmChainWant;

static void tonearm_chain_want_free(gpointer data) {
    TonearmChainWant *want = (TonearmChainWant *) data;
    for (guint index = 0; index < want->count; index++) gst_object_unref(want->stages[index]);
    g_free(want);
}

typedef struct {
    GstElement *bin, *head, *tail;  // referenced until the probe is removed
} TonearmChainJob;

static void tonearm_chain_job_free(gpointer data) {
    TonearmChainJob *job = (TonearmChainJob *) data;
    gst_object_unref(job->bin);
    gst_object_unref(job->head);
    gst_object_unref(job->tail);
    g_free(job);
}

// The element whose sink pad `element`'s src pad feeds, referenced; NULL when unlinked.
static GstElement *tonearm_downstream_of(GstElement *element) {
    GstPad *src = gst_element_get_static_pad(element, "src");
    if (src == NULL) return NULL;
    GstPad *peer = gst_pad_get_peer(src);
    gst_object_unref(src);
    if (peer == NULL) return NULL;
    GstElement *next = gst_pad_get_parent_element(peer);
    gst_object_unref(peer);
    return next;
}

static void tonearm_unlink_src(GstElement *element) {
    GstPad *src = gst_element_get_static_pad(element, "src");
    GstPad *peer = src != NULL ? gst_pad_get_peer(src) : NULL;
    if (peer != NULL) {
        gst_pad_unlink(src, peer);
        gst_object_unref(peer);
    }
    if (src != NULL) gst_object_unref(src);
}

// Runs when the head's src pad is idle (at once when no buffer is on its way through it, else on
// the streaming thread right after the push under way returns), so no buffer is inside the
// stages being relinked: the stream goes on from the next buffer with the new chain, no gap.
// The sticky events (stream-start, caps, segment, tags) reach a stage put in before that buffer.
static GstPadProbeReturn tonearm_chain_relink(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    TonearmChainJob *job = (TonearmChainJob *) data;
    GstElement *wanted[TONEARM_CHAIN_MAX];
    guint count = 0;
    pthread_mutex_lock(&tonearm_chain_lock);
    TonearmChainWant *want = g_object_get_data(G_OBJECT(job->head), TONEARM_CHAIN_WANT);
    if (want != NULL) {
        for (; count < want->count; count++) wanted[count] = gst_object_ref(want->stages[count]);
    }

    GstElement *current[TONEARM_CHAIN_MAX];
    guint linked = 0;
    gboolean foreign = FALSE;
    for (GstElement *next = tonearm_downstream_of(job->head); next != NULL; next = tonearm_downstream_of(next)) {
        if (next == job->tail) {
            gst_object_unref(next);
            break;
        }
        if (linked == TONEARM_CHAIN_MAX) {  // not a chain of ours: leave it as it is
            gst_object_unref(next);
            foreign = TRUE;
            break;
        }
        current[linked++] = next;
    }
    gboolean same = linked == count;
    for (guint index = 0; same && index < count; index++) same = wanted[index] == current[index];
    if (same || foreign) goto done;

    tonearm_unlink_src(job->head);
    for (guint index = 0; index < linked; index++) tonearm_unlink_src(current[index]);
    for (guint index = 0; index < linked; index++) {
        gboolean kept = FALSE;
        for (guint other = 0; other < count; other++) kept = kept || wanted[other] == current[index];
        if (kept) continue;
        // out of the stream now: nothing of ours runs in it, so its way to NULL waits on nothing
        gst_element_set_state(current[index], GST_STATE_NULL);
        gst_bin_remove(GST_BIN(job->bin), current[index]);
    }
    GstElement *previous = job->head;
    for (guint index = 0; index < count; index++) {
        if (GST_OBJECT_PARENT(wanted[index]) == NULL) gst_bin_add(GST_BIN(job->bin), wanted[index]);
        gst_element_link_pads(previous, "src", wanted[index], "sink");
        previous = wanted[index];
    }
    gst_element_link_pads(previous, "src", job->tail, "sink");
    for (guint index = 0; index < count; index++) gst_element_sync_state_with_parent(wanted[index]);

done:
    pthread_mutex_unlock(&tonearm_chain_lock);
    for (guint index = 0; index < linked; index++) gst_object_unref(current[index]);
    for (guint index = 0; index < count; index++) gst_object_unref(wanted[index]);
    return GST_PAD_PROBE_REMOVE;
}

void tonearm_filter_chain_set(GstElement *bin, GstElement *head, GstElement *tail, GstElement **stages, guint count) {
    TonearmChainWant *want = g_new0(TonearmChainWant, 1);
    for (; want->count < MIN(count, TONEARM_CHAIN_MAX); want->count++)
        want->stages[want->count] = gst_object_ref(stages[want->count]);
    GstPad *src = gst_element_get_static_pad(head, "src");
    TonearmChainJob *job = g_new0(TonearmChainJob, 1);
    job->bin = gst_object_ref(bin);
    job->head = gst_object_ref(head);
    job->tail = gst_object_ref(tail);
    // the job's fields are written before the unlock that the relink's lock follows
    pthread_mutex_lock(&tonearm_chain_lock);
    g_object_set_data_full(G_OBJECT(head), TONEARM_CHAIN_WANT, want, tonearm_chain_want_free);
    pthread_mutex_unlock(&tonearm_chain_lock);
    if (src == NULL) {
        tonearm_chain_job_free(job);
        return;
    }
    // not under the lock: an idle pad runs the relink at once, on this thread
    gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_IDLE, tonearm_chain_relink, job, tonearm_chain_job_free);
    gst_object_unref(src);
}
