import Basics
import CGStreamer
import FoundationEssentials

/// Reads what `Discoverer` reads (tags, duration, seekability, the kinds of streams) with a
/// smaller pipeline that stops at the tags: the URI's source, `parsebin` (demuxers and parsers,
/// no decoders), and a `fakesink` on each stream it exposes. The pipeline prerolls, which puts
/// every tag of the headers on the bus, and is asked for its duration and whether it can seek.
/// GstDiscoverer builds a `uridecodebin` with its own thread and bus handling for each URI, and
/// for an MP3 without a Xing header waits on its estimated length (gstdiscoverer.c). A parser
/// that knows the length only after some frames (baseparse estimates it from the bitrate,
/// mpegaudioparse for a plain MP3) gets them: the pipeline runs on, unsynchronised, until it
/// reports a length or ends.
///
/// After a read that went well the pipeline goes back to READY and is kept for the next URI of
/// the same scheme (its source is given the new URI through GstURIHandler): building a pipeline
/// and parsebin's list of factories for every file cost as much again as reading it. A read that
/// failed or timed out drops the pipeline; the next one builds a fresh one. It is several times
/// cheaper than GstDiscoverer per file (Benchmarks/queue.py compares the readers inside tonearmd).
///
/// `read` blocks for up to the timeout: call it on a thread of its own. Reads on one reader run
/// one at a time; the pipeline it keeps is released with it.
public final class TagReader: @unchecked Sendable {
    // @unchecked: `kept` is guarded by `lock`, held for the whole of a read.
    public let timeout: Duration
    private let lock = Lock()
    private var kept: Pipeline?

    /// One pipeline: its source, parsebin, bus, and the sinks given to the streams parsebin exposed.
    private final class Pipeline {
        let element: Element
        let source: UnsafeMutablePointer<GstElement>
        let parsebin: UnsafeMutablePointer<GstElement>
        let bus: Bus
        let streams: Streams
        let handler: gulong
        let scheme: String

        init(element: Element, source: UnsafeMutablePointer<GstElement>, parsebin: UnsafeMutablePointer<GstElement>,
             bus: Bus, streams: Streams, handler: gulong, scheme: String) {
            self.element = element
            self.source = source
            self.parsebin = parsebin
            self.bus = bus
            self.streams = streams
            self.handler = handler
            self.scheme = scheme
        }

        deinit {
            // at NULL no streaming thread adds a stream any more; only then may `streams` go
            element.setState(.null)
            g_signal_handler_disconnect(UnsafeMutableRawPointer(parsebin), handler)
        }
    }

    public init(timeout: Duration = .seconds(5)) {
        GStreamer.initialize()
        // codec descriptions come from pbutils, which needs this once (gst/pbutils/pbutils.c)
        gst_pb_utils_init()
        self.timeout = max(timeout, .milliseconds(1))
    }

    /// Reads `uri`, with the pipeline kept from the last read when it suits.
    public func read(_ uri: String) -> DiscovererResult {
        lock.withLock {
            let scheme = uri.prefix { $0 != ":" }.lowercased()
            let pipeline: Pipeline
            if let reused = kept, reused.scheme == scheme, Self.setURI(uri, of: reused.source) {
                pipeline = reused
            } else {
                kept = nil
                switch Self.build(uri, scheme: scheme) {
                case .success(let built): pipeline = built
                case .failure(let failure): return .failure(failure)
                }
            }
            let result = run(pipeline.element, bus: pipeline.bus, streams: pipeline.streams, uri: uri)
            // kept for the next read only after one that went well, clean: back to READY (the
            // file closed, parsebin's streams torn down), the sinks of its streams taken out
            kept = nil
            if case .success = result, pipeline.element.setState(.ready) != .failure {
                pipeline.streams.removeSinks()
                pipeline.bus.setFlushing(true)
                pipeline.bus.setFlushing(false)
                kept = pipeline
            }
            return result
        }
    }

    /// Gives `source` a new URI (`gst_uri_handler_set_uri`); false when it does not take it.
    private static func setURI(_ uri: String, of source: UnsafeMutablePointer<GstElement>) -> Bool {
        var error: UnsafeMutablePointer<GError>?
        defer { if let error { g_error_free(error) } }
        return gst_uri_handler_set_uri(OpaquePointer(source), uri, &error) != 0
    }

    /// A fresh pipeline for `uri`, in NULL.
    private static func build(_ uri: String, scheme: String) -> Result<Pipeline, DiscovererFailure> {
        var error: UnsafeMutablePointer<GError>?
        guard let source = gst_element_make_from_uri(GST_URI_SRC, uri, nil, &error) else {
            defer { if let error { g_error_free(error) } }
            return .failure(DiscovererFailure(
                reason: .invalidURI,
                error: error.map { GStreamerError($0) } ?? GStreamerError(domain: GStreamerError.resourceDomain, code: 3,  // NOT_FOUND
                                                                         message: "no GStreamer source can read \(uri)")))
        }
        guard let parsebin = gst_element_factory_make("parsebin", nil) else {
            gst_object_unref(source)
            return .failure(DiscovererFailure(
                reason: .missingPlugins,
                error: GStreamerError(domain: GStreamerError.coreDomain, code: 12, message: "GStreamer element 'parsebin' is not installed"),
                missingPlugins: ["parsebin"]))
        }
        guard let rawPipeline = gst_pipeline_new(nil) else {
            gst_object_unref(source)
            gst_object_unref(parsebin)
            return .failure(DiscovererFailure(reason: .error, error: GStreamerError(
                domain: GStreamerError.coreDomain, code: 0, message: "cannot build a pipeline to read \(uri)")))
        }
        let element = Element(taking: rawPipeline, isPipeline: true)
        let bin = UnsafeMutableRawPointer(element.pointer).assumingMemoryBound(to: GstBin.self)
        // the bin takes the floating references of both
        gst_bin_add(bin, source)
        gst_bin_add(bin, parsebin)
        let streams = Streams(bin: bin)
        var handler: gulong = 0
        if gst_element_link(source, parsebin) != 0 {
            let added: @convention(c) (UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstPad>?, gpointer?) -> Void = { _, pad, data in
                guard let pad, let data else { return }
                Unmanaged<Streams>.fromOpaque(data).takeUnretainedValue().add(pad)
            }
            // unretained: the Pipeline holds `streams` until it has disconnected the handler
            handler = tonearm_connect_pad_added(parsebin, added, Unmanaged.passUnretained(streams).toOpaque())
        }
        guard handler != 0, let bus = element.bus else {
            return .failure(DiscovererFailure(reason: .error, error: GStreamerError(
                domain: GStreamerError.coreDomain, code: 0, message: "cannot build a pipeline to read \(uri)")))
        }
        return .success(Pipeline(element: element, source: source, parsebin: parsebin, bus: bus, streams: streams,
                                 handler: handler, scheme: scheme))
    }

    private func run(_ pipeline: Element, bus: Bus, streams: Streams, uri: String) -> DiscovererResult {
        let deadline = ContinuousClock.now + timeout
        switch pipeline.setState(.paused) {
        case .noPreroll:
            return .success(DiscovererInfo(uri: uri, duration: nil, isSeekable: false, isLive: true, tags: TagList(),
                                           hasAudio: true, hasVideo: false))
        case .failure, .async, .success:
            break  // a failure leaves its ERROR on the bus
        }
        var tags = TagList()
        var missing: [String] = []
        var ended = false
        /// Takes messages until `done` says so; a failure when an error or the deadline comes first.
        func drain(until done: (Message.Kind) -> Bool) -> DiscovererFailure? {
            while true {
                let left = deadline - .now
                guard left > .zero, let message = bus.pop(timeout: left) else {
                    return DiscovererFailure(reason: .timeout, error: GStreamerError(
                        domain: GStreamerError.resourceDomain, code: 9, message: "timed out after \(timeout) reading \(uri)"))  // READ
                }
                switch message.kind {
                case .tags(let list): tags.add(list)
                case .missingPlugin(let description): missing.append(description)
                case .error(let error):
                    return DiscovererFailure(reason: missing.isEmpty ? .error : .missingPlugins, error: error, missingPlugins: missing)
                case .endOfStream: ended = true
                default: break
                }
                if ended || done(message.kind) { return nil }
            }
        }
        if let failure = drain(until: { if case .asyncDone = $0 { true } else { false } }) { return .failure(failure) }
        var duration = pipeline.queryDuration()
        if duration == nil && !ended {
            pipeline.setState(.playing)
            let failure = drain { kind in
                guard case .durationChanged = kind else { return false }
                duration = pipeline.queryDuration()
                return duration != nil
            }
            if failure?.reason != .timeout, let failure { return .failure(failure) }
            duration = duration ?? pipeline.queryDuration()
        }
        let found = streams.found
        if tags.values["audio-codec"] == nil, let codec = found.audioCodec { tags.values["audio-codec"] = [.string(codec)] }
        if tags.values["video-codec"] == nil, let codec = found.videoCodec { tags.values["video-codec"] = [.string(codec)] }
        return .success(DiscovererInfo(uri: uri, duration: duration, isSeekable: pipeline.querySeekable() ?? false,
                                       isLive: false, tags: tags, hasAudio: found.hasAudio, hasVideo: found.hasVideo))
    }

    /// The streams parsebin exposed, each given a fakesink as it appears (on a streaming thread).
    private final class Streams: @unchecked Sendable {
        // @unchecked: `pads` is guarded by `lock`; `bin` is the pipeline, which outlives this.
        struct Found {
            var hasAudio = false
            var hasVideo = false
            var audioCodec: String?
            var videoCodec: String?
        }

        private let bin: UnsafeMutablePointer<GstBin>
        private let lock = Lock()
        /// The sinks' pads, one reference each (released in deinit).
        private var pads: [UnsafeMutablePointer<GstPad>] = []

        init(bin: UnsafeMutablePointer<GstBin>) { self.bin = bin }

        deinit { for pad in pads { gst_object_unref(pad) } }

        /// Ends `pad` in a fakesink that does not sync to the clock.
        func add(_ pad: UnsafeMutablePointer<GstPad>) {
            guard let sink = gst_element_factory_make("fakesink", nil) else { return }
            tonearm_set_bool(UnsafeMutableRawPointer(sink), "sync", 0)
            gst_bin_add(bin, sink)
            if let sinkPad = gst_element_get_static_pad(sink, "sink") {
                _ = gst_pad_link(pad, sinkPad)
                lock.withLock { pads.append(sinkPad) }
            }
            gst_element_sync_state_with_parent(sink)
        }

        /// Takes the sinks out of the pipeline (at READY or below: no streaming thread runs), for
        /// the next URI's streams.
        func removeSinks() {
            for pad in lock.withLock({ defer { pads = [] }; return pads }) {
                if let sink = gst_pad_get_parent_element(pad) {
                    gst_element_set_state(sink, GST_STATE_NULL)
                    gst_bin_remove(bin, sink)
                    gst_object_unref(sink)
                }
                gst_object_unref(pad)
            }
        }

        /// What the streams carry, from the caps their sinks prerolled with (fixed by then; an
        /// `image/` stream, a cover in a container, is neither audio nor video).
        var found: Found {
            var found = Found()
            for pad in lock.withLock({ pads }) {
                guard let caps = gst_pad_get_current_caps(pad) else { continue }
                defer { tonearm_caps_unref(caps) }
                guard gst_caps_get_size(caps) > 0, let structure = gst_caps_get_structure(caps, 0),
                      let name = gst_structure_get_name(structure) else { continue }
                let mediaType = String(cString: name)
                // the caller owns the description (g_free); pbutils asserts on caps that are not fixed
                let description = gst_caps_is_fixed(caps) != 0 ? gst_pb_utils_get_codec_description(caps) : nil
                defer { g_free(description) }
                let codec = description.map { String(utf8Repairing: $0) }
                if mediaType.hasPrefix("audio/") {
                    found.hasAudio = true
                    found.audioCodec = found.audioCodec ?? codec
                } else if mediaType.hasPrefix("video/") {
                    found.hasVideo = true
                    found.videoCodec = found.videoCodec ?? codec
                }
            }
            return found
        }
    }
}
