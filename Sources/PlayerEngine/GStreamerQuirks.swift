import EngineLink
import GStreamer
import PlayerModel

/// Where the GStreamer versions Tonearm runs on (Debian 12: 1.22.0, Debian 13: 1.26.2) behave
/// differently (network streams, a looping video), and what the engine does about it: said here
/// once, with the GStreamer source that behaves so, so that what a person sees when a stream
/// fails, stalls or seeks is the same on both.
///
/// Each difference names the versions, the GStreamer source file that behaves so, and the test
/// that holds the behaviour the same on both.
///
/// A video that loops (`LoopStatus` `Track`, the engine's segment seeks): a lap lasts
/// the file's duration on 1.26, where qtdemux moves its position to the segment's end before
/// SEGMENT_DONE (qtdemux.c 1.26 gst_qtdemux_loop, "End of segment, updating segment.position";
/// GStreamer commit 422fca76ca), so a video shorter than its audio (AAC's last frame) holds its
/// last frame until the lap ends (the 2 s test clip's audio is 2.02 s: about 50 ms in all, where a
/// frame lasts 33). On 1.22 the next lap's running time began at the demuxer's last timestamp,
/// a frame's start: the last frame was cut from each lap.
enum GStreamerQuirks {
    /// souphttpsrc's `retries` is 0, so that Tonearm's reconnect policy (its attempts, its delays,
    /// the `reconnecting` wait a client sees) and the demuxers' own (hlsdemux's fragment and
    /// playlist-update counts) are the only ones. souphttpsrc 1.22.0 retried, up to `retries` (3)
    /// times, only a connection that broke or timed out (gstsouphttpsrc.c 1.22.0,
    /// gst_soup_http_src_parse_status: SOUP_STATUS_IO_ERROR); 1.26 also retries an answer of 500 or
    /// 503 that many times (gstsouphttpsrc.c 1.26.0, gst_soup_http_src_parse_status, commit
    /// 6652360d30 "Retry on SERVICE_UNAVAILABLE and INTERNAL_SERVER_ERROR"; not in 1.24), so that:
    /// - each of Tonearm's attempts at a server that is down became four requests
    ///   (ReconnectServiceTests: 9 requests for 2 attempts, where 1.22.0 made 3);
    /// - a live HLS playlist answering 503 six times in a row was four requests per update of
    ///   legacy hlsdemux, whose souphttpsrc (gsturidownloader.c, outside any bin, so no
    ///   `source-setup` reaches it) ate the outage in two failed updates of the three it allows
    ///   (gstadaptivedemux.c DEFAULT_FAILED_COUNT): the stream never ran dry nor reconnected
    ///   (NetworkServiceTests, live reconnect: no `reconnecting` in 40 s on 1.26.2).
    /// At 0 both versions ask once per attempt. Set on playbin's own source (`SourceSetup`) and,
    /// for the sources demuxers make, as the process's default (`prepare(for:)`).
    static let sourceSignedProperties: [(name: String, value: Int32)] = [("retries", 0)]

    /// Before `uri` is given to a pipeline: for the first network one, the defaults above become
    /// the process's, for the sources no `source-setup` reaches. Not at start: that loads
    /// souphttpsrc's plugin, and libsoup with it, which a process playing files never needs.
    static func prepare(for uri: MediaURI) {
        if !uri.isFile { _ = networkDefaults }
    }

    private static let networkDefaults: Void = {
        for (name, value) in sourceSignedProperties {
            GStreamer.setDefault(ofElement: "souphttpsrc", property: name, to: value)
        }
    }()

    /// What a new `playbin3` is given so that it buffers as legacy `playbin` does.
    ///
    /// `buffer-duration` at 2 s. Legacy playbin (uridecodebin) leaves an HTTP file's downloadbuffer
    /// at its own 2 s (gsturidecodebin.c: max-size-time only when buffer-duration is set;
    /// gstdownloadbuffer.c DEFAULT_MAX_SIZE_TIME), and that is how long playing waits at the start
    /// and after a seek on Debian 12, where legacy playbin is the default. playbin3's urisourcebin
    /// sets 5 s when buffer-duration is -1 (gsturisourcebin.c 1.26.2 ACTUAL_DEFAULT_BUFFER_DURATION,
    /// update_queue_values), so on Debian 13 in playbin3 a WAV over HTTP arriving a little faster
    /// than it plays was still buffering (at 65%) 5 s in, when the test's server dropped it, and
    /// resumed at 0 (ReconnectServiceTests). Network items play in legacy playbin there now unless
    /// `playbin3` is configured (`pipeline(for:)`); this holds for that case.
    static func configure(playbin3 playbin: Element) {
        playbin.set("buffer-duration", parsing: "2000000000")
    }

    /// The playbin that plays `uri`: `kind` (the configured one, or the recommended one for this
    /// GStreamer, `PipelineKind.recommended`), except a network item (http, https) or an HLS
    /// playlist (a path ending in `.m3u8`, RFC 8216 section 4) on GStreamer 1.24 or later when no
    /// pipeline was configured, which plays in legacy `playbin`, as every item does on 1.22, whose
    /// default it is. Files stay in `playbin3`. Two reasons, each a thing a person sees:
    ///
    /// 1. HLS. From 1.24 on the recommended `playbin3` plays HLS with `hlsdemux2`
    /// (gst-plugins-good ext/adaptivedemux2), which on 1.26.2 tells a person less, and less truly,
    /// than legacy `hlsdemux` (gst-plugins-bad ext/hls, still built in 1.26) when a segment fails:
    /// - it downloads segments itself (downloadhelper.c, no souphttpsrc, so no `http-headers`
    ///   message), and its error names no segment: the details hold only `http-status-code`
    ///   (gstadaptivedemux-stream.c gst_adaptive_demux2_stream_error), and the message that would
    ///   name the fragment's `uri` is compiled out (`#if 0`, "FIXME: Reenable statistics sending?",
    ///   in gst_adaptive_demux2_stream_advance_fragment). A segment's 404 named the playlist.
    /// - a VOD segment answering 5xx ends the stream with EOS after `max-retries` (3) requests, with
    ///   no error and no warning (on_download_error: every 5xx takes the branch that logs
    ///   "Converting error of live stream to EOS"): the item looked played to its end.
    /// - a segment that is not media stops the stream with "Internal data stream error"
    ///   (gst_adaptive_demux2_stream_parse_buffer): nothing after it plays.
    /// Legacy `hlsdemux` on 1.26.2 behaves as on 1.22.0: souphttpsrc fetches each segment and its
    /// `http-headers` name it and its status, a segment that keeps failing ends the stream (the
    /// engine fails the item naming the segment), one that is not media is skipped (a gap, told).
    /// NetworkServiceTests hold these on both (run with TONEARM_TEST_PIPELINE=playbin on 1.26.2,
    /// they passed there but for a live reconnect that the souphttpsrc retries above had hidden).
    ///
    /// 2. Buffering. An HTTP file under `playbin3` 1.26.2 shows no buffering below 100%: its
    /// urisourcebin's downloadbuffer starts at 0% without posting it, reads as the bytes come and
    /// stays at 0% until the file is whole, then posts 100 (GST_DEBUG=downloadbuffer:5;
    /// gstdownloadbuffer.c update_buffering posts a percent only when it changes), so a client
    /// never sees the stream buffering (WatchTests, a slow server: no buffering below 100 on
    /// 1.26.2 in `playbin3`; 1% then 100% in legacy `playbin`, on 1.22.0 and 1.26.2 alike).
    ///
    /// So every network item goes to legacy `playbin`, not only those named `.m3u8`: an HTTP file
    /// buffers as on 1.22, and an HLS playlist served under another name is in legacy `playbin`
    /// from the start, with no second load once its Content-Type is seen (the only place the
    /// engine learns one is souphttpsrc's `http-headers`, so only http and https items ever had
    /// that). A `.m3u8` file on disk goes there too: `hlsdemux2` would fetch its segments. A file
    /// on disk holding a playlist under another name is not told apart: it plays in the default.
    ///
    /// Legacy `hlsdemux` cannot stand in under `playbin3` on 1.26 (urisourcebin refuses a demuxer
    /// that posts no stream collection: gsturisourcebin.c "Adaptive demuxer is not
    /// streams-aware"), so the playbin is what changes. Under legacy `playbin`, decodebin2 tries
    /// `hlsdemux2` first (rank PRIMARY + 1, hls/gsthlsdemux.c hlsdemux2_element_init, over
    /// `hlsdemux`'s PRIMARY), which refuses to go to READY outside a streams-aware bin
    /// (gstadaptivedemux.c gst_adaptive_demux_change_state, "Element requires a streams-aware
    /// context."), and takes `hlsdemux` next. A configured pipeline (`--pipeline`,
    /// `TONEARM_PIPELINE`) is kept as it is: `playbin3` there is `hlsdemux2`'s behaviour and
    /// the downloadbuffer's, above.
    static func pipeline(for uri: MediaURI, default kind: EngineConfiguration.PipelineKind, configured: Bool,
                         version: Version = GStreamer.versionNumbers) -> EngineConfiguration.PipelineKind {
        let hls = uri.url.pathExtension.lowercased() == "m3u8"
        guard !uri.isFile || hls, kind == .playbin3, !configured, (version.major, version.minor) >= (1, 24) else { return kind }
        return .playbin
    }

    typealias Version = (major: Int, minor: Int, micro: Int)
}
