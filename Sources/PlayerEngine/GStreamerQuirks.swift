import GStreamer

/// Where the GStreamer versions Tonearm runs on (Debian 12: 1.22.0, Debian 13: 1.26.2) behave
/// differently for network streams, and what the engine does about it: said here once, with the
/// GStreamer source that behaves so, so that what a person sees when a stream fails, stalls or
/// seeks is the same on both.
///
/// Not evened out yet (playbin3's hlsdemux2 on 1.26.2, the default there; legacy hlsdemux cannot
/// run under playbin3 on 1.26: urisourcebin refuses it, "Adaptive demuxer is not streams-aware"):
/// - a segment that fails is not named: hlsdemux2 downloads without souphttpsrc (no http-headers
///   message) and its error's details hold only `http-status-code`; the `uri` beside it is the
///   playlist's (gstadaptivedemux-stream.c gst_adaptive_demux2_stream_error). The item's error
///   says the status and the playlist's URL.
/// - a VOD segment answering 5xx ends the stream with EOS after `max-retries` (3) requests, not an
///   error (gstadaptivedemux-stream.c on_download_error, "Converting error of live stream to
///   EOS"): the item is played to its end there, with nothing said of the failure.
/// - a segment that is not media stops the stream with "Internal data stream error"
///   (gst_adaptive_demux2_stream_parse_buffer): no gap to skip.
///
/// And for a video that loops (`LoopStatus` `Track`, the engine's segment seeks): a lap lasts
/// the file's duration on 1.26, where qtdemux moves its position to the segment's end before
/// SEGMENT_DONE (qtdemux.c 1.26 gst_qtdemux_loop, "End of segment, updating segment.position";
/// GStreamer commit 422fca76ca), so a video shorter than its audio (AAC's last frame) holds its
/// last frame until the lap ends (the 2 s test clip's audio is 2.02 s: about 50 ms in all, where a
/// frame lasts 33). On 1.22 the next lap's running time began at the demuxer's last timestamp,
/// a frame's start: the last frame was cut from each lap.
enum GStreamerQuirks {
    /// Signed properties for every source element playbin makes (`SourceSetup`).
    ///
    /// souphttpsrc's `retries` is 0, so that Tonearm's reconnect policy (its attempts, its delays,
    /// the `reconnecting` wait a client sees) is the only one. souphttpsrc 1.22.0 retried, up to
    /// `retries` (3) times, only a connection that broke or timed out (gstsouphttpsrc.c 1.22.0,
    /// gst_soup_http_src_parse_status: SOUP_STATUS_IO_ERROR); 1.26 also retries an answer of
    /// 500 or 503 that many times (gstsouphttpsrc.c 1.26.0, gst_soup_http_src_parse_status,
    /// "Retry on SERVICE_UNAVAILABLE and INTERNAL_SERVER_ERROR"), so that each of Tonearm's
    /// attempts at a server that is down became four requests (ReconnectServiceTests: 9 requests
    /// for 2 attempts, where 1.22.0 made 3). At 0 both versions ask once per attempt.
    static let sourceSignedProperties: [(name: String, value: Int32)] = [("retries", 0)]

    /// What a new `playbin3` is given so that it buffers as legacy `playbin` does.
    ///
    /// `buffer-duration` at 2 s. Legacy playbin (uridecodebin) leaves an HTTP file's downloadbuffer
    /// at its own 2 s (gsturidecodebin.c: max-size-time only when buffer-duration is set;
    /// gstdownloadbuffer.c DEFAULT_MAX_SIZE_TIME), and that is how long playing waits at the start
    /// and after a seek on Debian 12, where legacy playbin is the default. playbin3's urisourcebin
    /// sets 5 s when buffer-duration is -1 (gsturisourcebin.c 1.26.2 ACTUAL_DEFAULT_BUFFER_DURATION,
    /// update_queue_values), so on Debian 13, where playbin3 is the default, a WAV over HTTP arriving
    /// a little faster than it plays was still buffering (at 65%) 5 s in, when the test's server
    /// dropped it, and resumed at 0 (ReconnectServiceTests).
    static func configure(playbin3 playbin: Element) {
        playbin.set("buffer-duration", parsing: "2000000000")
    }
}
