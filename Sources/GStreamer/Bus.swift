import CGStreamer
import CGStreamerCallbacks
import Synchronization

/// A pipeline's `GstBus`, read without a GLib main loop: its poll file descriptor becomes readable
/// when a message is pending, and `pop` drains it (`gst_bus_get_pollfd`, `gst_bus_pop`).
public final class Bus: @unchecked Sendable {
    // @unchecked: only immutable fields; gst_bus_pop and gst_bus_set_flushing take the bus's lock.
    private let pointer: UnsafeMutablePointer<GstBus>
    private unowned let pipeline: Element

    init(taking pointer: UnsafeMutablePointer<GstBus>, pipeline: Element) {
        self.pointer = pointer
        self.pipeline = pipeline
    }

    deinit { gst_object_unref(pointer) }

    /// The file descriptor that is readable while messages are pending (`gst_bus_get_pollfd`).
    public var fileDescriptor: Int32 {
        var pollFD = GPollFD()
        gst_bus_get_pollfd(pointer, &pollFD)
        return pollFD.fd
    }

    /// The next pending message, copied into Swift, or nil (`gst_bus_pop`; the message is unreffed).
    public func pop() -> Message? {
        guard let raw = gst_bus_pop(pointer) else { return nil }
        defer { tonearm_message_unref(raw) }
        return Message(raw, fromPipeline: pipeline.isSource(of: raw))
    }

    /// The next message, waiting for one at most `timeout` (`gst_bus_timed_pop`), or nil. Blocks:
    /// for a thread of its own (a tag reader's), never for a queue that must answer.
    public func pop(timeout: Duration) -> Message? {
        let (seconds, attoseconds) = min(max(timeout, .zero), .seconds(3600)).components
        let nanoseconds = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
        guard let raw = gst_bus_timed_pop(pointer, GstClockTime(nanoseconds)) else { return nil }
        defer { tonearm_message_unref(raw) }
        return Message(raw, fromPipeline: pipeline.isSource(of: raw))
    }

    /// Drops every pending message and, while `true`, every new one (`gst_bus_set_flushing`).
    public func setFlushing(_ flushing: Bool) { gst_bus_set_flushing(pointer, flushing ? 1 : 0) }

    /// Messages that `takeAsyncDone(dropping:_:)` drops as they are posted, for a reader that
    /// never looks at them: they are not queued and do not make the file descriptor readable.
    public struct Unread: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// STATE_CHANGED of the elements inside the pipeline (the pipeline's own are kept).
        public static let childStateChanges = Unread(rawValue: 1 << 0)
        /// STREAM_STATUS: a streaming thread was made, started or stopped.
        public static let streamStatus = Unread(rawValue: 1 << 1)
    }

    /// Calls `handler` for each ASYNC_DONE the pipeline itself posts, on the thread that posts it
    /// (a streaming thread, or one of the bin's state threads), before the message is queued
    /// (`gst_bus_set_sync_handler`; the bus keeps the handler until it is freed). When `handler`
    /// returns true it has taken the message, which is dropped instead of queued; the messages
    /// named in `unread` are dropped too; every other message is queued as before. `handler` runs
    /// with GStreamer's locks held: it must only hand something over, never wait or call into the
    /// pipeline. Once per bus.
    ///
    /// `windowFor`, when given, answers a video sink's `prepare-window-handle` on the thread that
    /// posts it (trap 12): it gets the size the sink shows the video at (pixel aspect applied) and
    /// returns the window to draw into (an X11 window id), which the sink gets with
    /// `gst_video_overlay_set_window_handle` before the message is dropped; nil leaves the message
    /// to the sink's own window. It is the one handler here that may wait, bounded, for a window.
    public func takeAsyncDone(dropping unread: Unread = [], windowFor: (@Sendable (_ width: Int, _ height: Int) -> UInt64?)? = nil,
                              _ handler: @escaping @Sendable (_ seqnum: UInt32) -> Bool) {
        let box = SyncHandler(pipeline: UnsafeMutableRawPointer(pipeline.pointer), unread: unread, handler: handler, windowFor: windowFor)
        gst_bus_set_sync_handler(pointer, { _, message, data in
            guard let message, let data else { return GST_BUS_PASS }
            let box = Unmanaged<SyncHandler>.fromOpaque(data).takeUnretainedValue()
            guard box.isPublished else { return GST_BUS_PASS }
            let fromPipeline = UnsafeMutableRawPointer(tonearm_message_src(message)) == box.pipeline
            let drop = switch tonearm_message_type(message) {
            case GST_MESSAGE_ASYNC_DONE: fromPipeline && box.handler(gst_message_get_seqnum(message))
            case GST_MESSAGE_STATE_CHANGED: !fromPipeline && box.unread.contains(.childStateChanges)
            case GST_MESSAGE_STREAM_STATUS: box.unread.contains(.streamStatus)
            case GST_MESSAGE_ELEMENT: box.answerWindowRequest(message)
            default: false
            }
            guard drop else { return GST_BUS_PASS }
            // a sync handler that drops a message unrefs it (gstbus.h, GstBusSyncHandler)
            tonearm_message_unref(message)
            return GST_BUS_DROP
        }, Unmanaged.passRetained(box).toOpaque(), { data in
            if let data { Unmanaged<SyncHandler>.fromOpaque(data).release() }
        })
    }
}

/// What `Bus.takeAsyncDone` hands to GStreamer: the pipeline (compared, never dereferenced), the
/// messages to drop and the handler. Immutable once made.
///
/// GStreamer hands it to the posting threads under the bus's object lock (gst_bus_set_sync_handler
/// and gst_bus_post both take it), a GLib mutex, which ThreadSanitizer cannot see: it reported
/// every read of these fields on a streaming thread as racing with `init` (make test-tsan, 17
/// reports once the handler read them for every STATE_CHANGED and STREAM_STATUS). `init` ends
/// with a releasing store that the handler's first read acquires: the same order, made visible.
private final class SyncHandler: Sendable {
    nonisolated(unsafe) let pipeline: UnsafeMutableRawPointer
    let unread: Bus.Unread
    let handler: @Sendable (UInt32) -> Bool
    let windowFor: (@Sendable (_ width: Int, _ height: Int) -> UInt64?)?
    private let published = Atomic<Bool>(false)
    init(pipeline: UnsafeMutableRawPointer, unread: Bus.Unread, handler: @escaping @Sendable (UInt32) -> Bool,
         windowFor: (@Sendable (_ width: Int, _ height: Int) -> UInt64?)?) {
        self.pipeline = pipeline
        self.unread = unread
        self.handler = handler
        self.windowFor = windowFor
        published.store(true, ordering: .releasing)
    }
    /// True when `message` was a `prepare-window-handle` that got a window (and is dropped).
    func answerWindowRequest(_ message: UnsafeMutablePointer<GstMessage>) -> Bool {
        guard let windowFor, tonearm_is_prepare_window_handle(message) != 0 else { return false }
        var width: Int32 = 0, height: Int32 = 0
        tonearm_video_sink_size(message, &width, &height)
        guard let window = windowFor(Int(width), Int(height)) else { return false }
        // the window lives in another process, which may end before the sink stops drawing
        _ = tonearm_survive_x_errors()
        tonearm_set_window_handle(message, guint64(window))
        return true
    }
    /// Always true once made; read first, so that the fields' values are seen as `init` left them.
    var isPublished: Bool { published.load(ordering: .acquiring) }
}

/// A bus message copied out of its `GstMessage` at once: a `Sendable` value with no pointer in it.
public struct Message: Sendable {
    public enum Kind: Sendable {
        case endOfStream
        case error(GStreamerError)
        case warning(GStreamerError)
        case tags(TagList)
        case buffering(percent: Int)
        case stateChanged(old: ElementState, new: ElementState, pending: ElementState)
        case asyncDone
        case durationChanged
        case streamStart
        /// A plugin playbin needed is not installed (`gst_missing_plugin_message_get_description`).
        case missingPlugin(description: String)
        case clockLost
        case requestState(ElementState)
        /// An HTTP source got a response (souphttpsrc's `http-headers` element message: the URI it
        /// asked for and the status code). hlsdemux's fragment downloads post it too.
        /// With the response's `Content-Type` and `Content-Length` when it has them.
        case httpResponse(uri: String, status: Int, contentType: String?, contentLength: Int?)
        /// The stream jumped from `start` to `end` (stream time, nanoseconds) with nothing between:
        /// posted by an element that `Element.watchForGaps` watches.
        case gap(start: Int64, end: Int64)
        /// An HTTP source's download reached `position` of `length` bytes: posted by a source that
        /// `SourceSetup` watches with `downloadSteps`.
        case downloaded(position: Int64, length: Int64)
        /// A segment seek's segment was played out by the element that ran it (a demuxer):
        /// GST_MESSAGE_SEGMENT_DONE, aggregated by the bin, with the seek's sequence number.
        case segmentDone(seqnum: UInt32)
        /// A new segment reached a sink that `Element.watchForSegments` watches, made by the seek
        /// with this sequence number.
        case segmentReached(seqnum: UInt32)
        /// The stream of a pulsesink that `Element.watchStreamLevels` watches changed at the sound
        /// server (its volume or mute, maybe): read them from the element.
        case streamLevelsChanged
        /// A table of contents (GST_MESSAGE_TOC): a demuxer's or parser's chapters, editions or
        /// tracks, as each sink that received it posts it (so more than once per stream); `updated`
        /// when it replaces one given before.
        case toc([TocEntry], updated: Bool)
        case latency
        case other(String)
    }

    public var kind: Kind
    /// The name of the element that posted it.
    public var source: String
    /// Whether the pipeline itself posted it (state changes of children are not the pipeline's).
    public var isFromPipeline: Bool
    /// Its sequence number (`gst_message_get_seqnum`): from the counter events' numbers come from,
    /// so a message made before an event has an older one (`Seqnum.isOlder`), unless it was
    /// given the number of the event that caused it.
    public var seqnum: UInt32

    init(_ message: UnsafeMutablePointer<GstMessage>, fromPipeline: Bool) {
        isFromPipeline = fromPipeline
        seqnum = gst_message_get_seqnum(message)
        let source = tonearm_message_src(message).flatMap { tonearm_object_name($0) }.map { String(utf8Repairing: $0) } ?? ""
        self.source = source
        let type = tonearm_message_type(message)
        switch type {
        case GST_MESSAGE_EOS:
            kind = .endOfStream
        case GST_MESSAGE_ERROR, GST_MESSAGE_WARNING:
            var error: UnsafeMutablePointer<GError>?
            var debug: UnsafeMutablePointer<gchar>?
            if type == GST_MESSAGE_ERROR { gst_message_parse_error(message, &error, &debug) }
            else { gst_message_parse_warning(message, &error, &debug) }
            defer {
                if let error { g_error_free(error) }
                g_free(debug)
            }
            var copied = error.map { GStreamerError($0, debug: debug.map { String(utf8Repairing: $0) }, source: source) }
                ?? GStreamerError(domain: GStreamerError.coreDomain, code: 0, message: "unknown error", source: source)
            var details: UnsafePointer<GstStructure>?
            if type == GST_MESSAGE_ERROR { gst_message_parse_error_details(message, &details) }
            else { gst_message_parse_warning_details(message, &details) }
            if let details {  // owned by the message
                var status: guint = 0
                if gst_structure_get_uint(details, "http-status-code", &status) != 0, status > 0 { copied.httpStatus = Int(status) }
                copied.httpURI = gst_structure_get_string(details, "uri").map { String(utf8Repairing: $0) }
            }
            kind = type == GST_MESSAGE_ERROR ? .error(copied) : .warning(copied)
        case GST_MESSAGE_TAG:
            var list: UnsafeMutablePointer<GstTagList>?
            gst_message_parse_tag(message, &list)
            if let list {
                defer { tonearm_tag_list_unref(list) }
                kind = .tags(TagList(list))
            } else {
                kind = .tags(TagList())
            }
        case GST_MESSAGE_BUFFERING:
            var percent: gint = 0
            gst_message_parse_buffering(message, &percent)
            kind = .buffering(percent: Int(percent))
        case GST_MESSAGE_STATE_CHANGED:
            var old = GST_STATE_VOID_PENDING, new = GST_STATE_VOID_PENDING, pending = GST_STATE_VOID_PENDING
            gst_message_parse_state_changed(message, &old, &new, &pending)
            kind = .stateChanged(old: ElementState(old), new: ElementState(new), pending: ElementState(pending))
        case GST_MESSAGE_ASYNC_DONE:
            kind = .asyncDone
        case GST_MESSAGE_DURATION_CHANGED:
            kind = .durationChanged
        case GST_MESSAGE_STREAM_START:
            kind = .streamStart
        case GST_MESSAGE_CLOCK_LOST:
            kind = .clockLost
        case GST_MESSAGE_LATENCY:
            kind = .latency
        case GST_MESSAGE_REQUEST_STATE:
            var state = GST_STATE_VOID_PENDING
            gst_message_parse_request_state(message, &state)
            kind = .requestState(ElementState(state))
        case GST_MESSAGE_ELEMENT where gst_is_missing_plugin_message(message) != 0:
            let description = gst_missing_plugin_message_get_description(message)
            defer { g_free(description) }
            kind = .missingPlugin(description: description.map { String(utf8Repairing: $0) } ?? "unknown plugin")
        case GST_MESSAGE_ELEMENT where gst_message_has_name(message, "http-headers") != 0:
            let structure = gst_message_get_structure(message)
            var status: guint = 0
            gst_structure_get_uint(structure, "http-status-code", &status)
            let uri = gst_structure_get_string(structure, "uri").map { String(utf8Repairing: $0) } ?? ""
            // souphttpsrc keeps the response's headers as a structure of strings, named as sent
            var contentType: String?, contentLength: Int?
            if let value = gst_structure_get_value(structure, "response-headers"),
               tonearm_value_holds_structure(value) != 0, let headers = gst_value_get_structure(value) {
                for index in 0..<gst_structure_n_fields(headers) {
                    guard let field = gst_structure_nth_field_name(headers, guint(index)) else { continue }
                    let name = String(cString: field).lowercased()
                    guard name == "content-type" || name == "content-length",
                          let text = gst_structure_get_string(headers, field).map({ String(utf8Repairing: $0) }) else { continue }
                    if name == "content-type" { contentType = text } else { contentLength = Int(text) }
                }
            }
            kind = .httpResponse(uri: uri, status: Int(status), contentType: contentType, contentLength: contentLength)
        case GST_MESSAGE_ELEMENT where gst_message_has_name(message, "tonearm-gap") != 0:
            let (start, end) = Self.unsignedPair(message, "start", "end")
            kind = .gap(start: start, end: end)
        case GST_MESSAGE_ELEMENT where gst_message_has_name(message, "tonearm-download") != 0:
            let (position, length) = Self.unsignedPair(message, "position", "length")
            kind = .downloaded(position: position, length: length)
        case GST_MESSAGE_SEGMENT_DONE:
            kind = .segmentDone(seqnum: gst_message_get_seqnum(message))
        case GST_MESSAGE_ELEMENT where gst_message_has_name(message, "tonearm-segment") != 0:
            var seqnum: guint = 0
            gst_structure_get_uint(gst_message_get_structure(message), "seqnum", &seqnum)
            kind = .segmentReached(seqnum: UInt32(seqnum))
        case GST_MESSAGE_ELEMENT where gst_message_has_name(message, "tonearm-stream-levels") != 0:
            kind = .streamLevelsChanged
        case GST_MESSAGE_TOC:
            var toc: OpaquePointer?
            var updated: gboolean = 0
            gst_message_parse_toc(message, &toc, &updated)
            if let toc {
                defer { tonearm_toc_unref(toc) }
                kind = .toc(TocEntry.copy(gst_toc_get_entries(toc)), updated: updated != 0)
            } else {
                kind = .toc([], updated: updated != 0)
            }
        default:
            kind = .other(gst_message_type_get_name(type).map { String(cString: $0) } ?? "unknown")
        }
    }

    /// Two guint64 fields of one of our own element messages (0 when missing), saturated to Int64.
    private static func unsignedPair(_ message: UnsafeMutablePointer<GstMessage>, _ first: String, _ second: String) -> (Int64, Int64) {
        let structure = gst_message_get_structure(message)
        var a: guint64 = 0, b: guint64 = 0
        gst_structure_get_uint64(structure, first, &a)
        gst_structure_get_uint64(structure, second, &b)
        return (Int64(clamping: a), Int64(clamping: b))
    }
}


/// One entry of a table of contents (`GstTocEntry`), copied: an alternative is one of several
/// versions of the whole (a Matroska edition), a sequence one part after another (a chapter, a
/// cue sheet's track); nested entries are `children`. Times in nanoseconds, nil when not set.
public struct TocEntry: Sendable, Equatable {
    public var isAlternative: Bool
    public var start: Int64?
    public var stop: Int64?
    /// The entry's title tag, repaired to UTF-8.
    public var title: String?
    public var children: [TocEntry]

    public init(isAlternative: Bool = false, start: Int64?, stop: Int64?, title: String?, children: [TocEntry] = []) {
        self.isAlternative = isAlternative
        self.start = start
        self.stop = stop
        self.title = title
        self.children = children
    }

    /// The entries of a `GList` of `GstTocEntry` owned by their table (not consumed), depth first.
    static func copy(_ list: UnsafeMutablePointer<GList>?, depth: Int = 0) -> [TocEntry] {
        guard depth < 8 else { return [] }  // a hostile file's nesting ends here
        var entries: [TocEntry] = []
        var node = list
        while let current = node {
            defer { node = current.pointee.next }
            guard let data = current.pointee.data else { continue }
            let entry = OpaquePointer(data)
            var start: gint64 = -1, stop: gint64 = -1
            if gst_toc_entry_get_start_stop_times(entry, &start, &stop) == 0 { start = -1; stop = -1 }
            let title = gst_toc_entry_get_tags(entry).map { TagList($0) }?.string("title")
            entries.append(TocEntry(isAlternative: gst_toc_entry_is_alternative(entry) != 0,
                                    start: start >= 0 ? Int64(start) : nil, stop: stop >= 0 ? Int64(stop) : nil, title: title,
                                    children: copy(gst_toc_entry_get_sub_entries(entry), depth: depth + 1)))
        }
        return entries
    }
}

/// GStreamer's sequence numbers (`gst_util_seqnum_next`), which wrap around.
public enum Seqnum {
    /// Whether `a` was given before `b` (`gst_util_seqnum_compare` < 0).
    public static func isOlder(_ a: UInt32, than b: UInt32) -> Bool { Int32(bitPattern: a &- b) < 0 }
}
