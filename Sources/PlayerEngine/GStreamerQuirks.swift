import GStreamer

/// Where the GStreamer versions Tonearm runs on (Debian 12: 1.22.0, Debian 13: 1.26.2) behave
/// differently for network streams, and what the engine does about it: said here once, with the
/// GStreamer source that behaves so, so that what a person sees when a stream fails, stalls or
/// seeks is the same on both.
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
}
