import CGStreamer
import CGStreamerCallbacks

/// A pipeline state (`GstState`).
public enum ElementState: Int32, Sendable, CustomStringConvertible {
    case voidPending = 0, null = 1, ready = 2, paused = 3, playing = 4

    init(_ state: GstState) { self = ElementState(rawValue: Int32(state.rawValue)) ?? .voidPending }
    var gst: GstState { GstState(rawValue: UInt32(rawValue)) }
    public var description: String {
        switch self {
        case .voidPending: "VOID_PENDING"
        case .null: "NULL"
        case .ready: "READY"
        case .paused: "PAUSED"
        case .playing: "PLAYING"
        }
    }
}

/// The result of `gst_element_set_state`.
public enum StateChangeResult: Sendable {
    case failure, success, async, noPreroll
}

/// Seek flags (`GstSeekFlags`).
public struct SeekFlags: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let flush = SeekFlags(rawValue: GST_SEEK_FLAG_FLUSH.rawValue)
    public static let accurate = SeekFlags(rawValue: GST_SEEK_FLAG_ACCURATE.rawValue)
    public static let keyUnit = SeekFlags(rawValue: GST_SEEK_FLAG_KEY_UNIT.rawValue)
    public static let snapBefore = SeekFlags(rawValue: GST_SEEK_FLAG_SNAP_BEFORE.rawValue)
    public static let snapAfter = SeekFlags(rawValue: GST_SEEK_FLAG_SNAP_AFTER.rawValue)
    public static let snapNearest = SeekFlags(rawValue: GST_SEEK_FLAG_SNAP_NEAREST.rawValue)
    public static let trickMode = SeekFlags(rawValue: GST_SEEK_FLAG_TRICKMODE.rawValue)
    public static let instantRateChange = SeekFlags(rawValue: GST_SEEK_FLAG_INSTANT_RATE_CHANGE.rawValue)
    /// The end of the segment is a SEGMENT_DONE message instead of EOS, and the pipeline stays
    /// ready for a non-flushing seek that goes on seamlessly (GStreamer's way to loop).
    public static let segment = SeekFlags(rawValue: GST_SEEK_FLAG_SEGMENT.rawValue)
}

/// A reference to a `GstElement`. Takes ownership of one reference (sinking a floating one) and
/// releases it on deinit; a pipeline is set to NULL before that (trap 8 in the design brief).
public final class Element: @unchecked Sendable {
    // @unchecked: only immutable fields; GStreamer's element calls are thread-safe (GObject
    // refcounts, each gst_element_* call takes the object's own lock). Which thread may call what
    // (state changes never on the service queue) is the engine's rule, not this wrapper's.
    let pointer: UnsafeMutablePointer<GstElement>
    private let ownsPipeline: Bool

    /// Wraps `pointer`, taking ownership with `gst_object_ref_sink` (elements start floating).
    init(taking pointer: UnsafeMutablePointer<GstElement>, isPipeline: Bool = false) {
        self.pointer = pointer
        self.ownsPipeline = isPipeline
        gst_object_ref_sink(pointer)
    }

    deinit {
        if ownsPipeline { gst_element_set_state(pointer, GST_STATE_NULL) }
        gst_object_unref(pointer)
    }

    /// `gst_element_factory_make`. A top-level pipeline (`isPipeline`) is set to NULL before its
    /// last reference goes.
    public convenience init(factory: String, name: String? = nil, isPipeline: Bool = false) throws(GStreamerError) {
        GStreamer.initialize()
        guard let element = gst_element_factory_make(factory, name) else {
            throw GStreamerError(domain: GStreamerError.coreDomain, code: Int32(GST_CORE_ERROR_MISSING_PLUGIN.rawValue),
                                 message: "GStreamer element '\(factory)' is not installed")
        }
        self.init(taking: element, isPipeline: isPipeline)
    }

    /// `gst_parse_bin_from_description` with ghost pads for the unlinked ones: a description such
    /// as `wavenc ! filesink location=out.wav` becomes one element usable as a sink.
    public convenience init(binDescription: String) throws(GStreamerError) {
        GStreamer.initialize()
        var error: UnsafeMutablePointer<GError>?
        let bin = gst_parse_bin_from_description(binDescription, 1, &error)
        if let error {
            defer { g_error_free(error) }
            if let bin { gst_object_unref(bin) }
            throw GStreamerError(error)
        }
        guard let bin else {
            throw GStreamerError(domain: GStreamerError.coreDomain, code: 0, message: "could not parse '\(binDescription)'")
        }
        self.init(taking: UnsafeMutableRawPointer(bin).assumingMemoryBound(to: GstElement.self))
    }

    var object: gpointer { UnsafeMutableRawPointer(pointer) }

    /// The element's name (`GST_OBJECT_NAME`).
    public var name: String {
        tonearm_object_name(UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GstObject.self))
            .map { String(cString: $0) } ?? ""
    }

    /// The name of the factory that made the element.
    public var factoryName: String? { tonearm_element_factory_name(pointer).map { String(cString: $0) } }

    /// A playbin's video size as decoded, pixel aspect applied to the width (the caps on its
    /// playsink's `video_sink` pad); nil without video.
    public var playbinVideoSize: (width: Int, height: Int)? {
        var width: Int32 = 0, height: Int32 = 0
        tonearm_playbin_video_size(object, &width, &height)
        return width > 0 && height > 0 ? (Int(width), Int(height)) : nil
    }

    /// Sends a RECONFIGURE event upstream from a sink's pad (`gst_pad_push_event`): the stream
    /// negotiates again.
    public func reconfigureSink() { tonearm_reconfigure_sink(object) }

    /// `gst_video_overlay_expose`: a video sink draws its last frame again; nothing for another element.
    public func exposeVideo() { tonearm_video_overlay_expose(object) }

    /// `force-aspect-ratio`, taken at once: glimagesink reads it only when its window is resized,
    /// so its layout is redone at its next draw (`tonearm_gl_sink_queue_resize`).
    public func setForceAspectRatio(_ on: Bool) {
        set("force-aspect-ratio", on)
        tonearm_gl_sink_queue_resize(pointer)
    }

    /// A glimagesink's GL display: the X display `name` (a GstContext set on it), after checking,
    /// with `probe`, that an OpenGL context opens there (`tonearm_gl_sink_use_display`). `opens`
    /// false when it does not (or the display cannot be opened): the sink is left as it was.
    /// `renderer`: the probe's context's GL_RENDERER ("llvmpipe (LLVM 15.0.6, 256 bits)"), nil
    /// without a probe or when it could not be read.
    public func useGLDisplay(_ name: String, probe: Bool) -> (opens: Bool, renderer: String?) {
        var renderer: UnsafeMutablePointer<gchar>?
        let opens = tonearm_gl_sink_use_display(pointer, name, probe ? 1 : 0, &renderer) != 0
        defer { g_free(renderer) }
        return (opens, renderer.map { String(cString: $0) })
    }

    /// The size of the raw video entering this element's `sink` pad (its current caps), pixel
    /// aspect applied to the width; nil before caps or for other media. Any thread.
    public var sinkVideoSize: (width: Int, height: Int)? {
        guard let pad = gst_element_get_static_pad(pointer, "sink") else { return nil }
        defer { gst_object_unref(pad) }
        guard let caps = gst_pad_get_current_caps(pad) else { return nil }
        defer { tonearm_caps_unref(caps) }
        var width: Int32 = 0, height: Int32 = 0
        tonearm_caps_video_size(caps, &width, &height)
        return width > 0 && height > 0 ? (Int(width), Int(height)) : nil
    }

    public func set(_ property: String, _ value: String) { tonearm_set_string(object, property, value) }
    /// `gst_util_set_object_arg`: the property's value parsed from `text` as gst-launch-1.0 parses
    /// it (caps, fractions, enums by nick).
    public func set(_ property: String, parsing text: String) {
        gst_util_set_object_arg(UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GObject.self), property, text)
    }
    public func set(_ property: String, _ value: Int32) { tonearm_set_int(object, property, value) }
    public func set(_ property: String, flags value: UInt32) { tonearm_set_flags(object, property, value) }
    public func set(_ property: String, _ value: UInt64) { tonearm_set_uint64(object, property, guint64(value)) }
    public func set(_ property: String, _ value: Double) { tonearm_set_double(object, property, value) }
    public func set(_ property: String, _ value: Bool) { tonearm_set_bool(object, property, value ? 1 : 0) }
    public func set(_ property: String, _ value: Element) { tonearm_set_object(object, property, value.object) }
    public func flags(_ property: String) -> UInt32 { tonearm_get_flags(object, property) }
    public func double(_ property: String) -> Double { tonearm_get_double(object, property) }
    public func bool(_ property: String) -> Bool { tonearm_get_bool(object, property) != 0 }
    public func string(_ property: String) -> String? {
        guard let value = tonearm_get_string(object, property) else { return nil }
        defer { g_free(value) }
        return String(utf8Repairing: value)
    }

    /// `gst_element_set_state`.
    @discardableResult
    public func setState(_ state: ElementState) -> StateChangeResult {
        switch gst_element_set_state(pointer, state.gst) {
        case GST_STATE_CHANGE_SUCCESS: .success
        case GST_STATE_CHANGE_ASYNC: .async
        case GST_STATE_CHANGE_NO_PREROLL: .noPreroll
        default: .failure
        }
    }

    /// The current and pending state without waiting (`gst_element_get_state` with timeout 0).
    public var currentState: (current: ElementState, pending: ElementState) {
        var current = GST_STATE_VOID_PENDING
        var pending = GST_STATE_VOID_PENDING
        gst_element_get_state(pointer, &current, &pending, 0)
        return (ElementState(current), ElementState(pending))
    }

    /// The running time a pipeline resumes from when it next goes to PLAYING, in nanoseconds: where
    /// it paused, 0 after a preroll or a flushing seek (`gst_element_get_start_time`,
    /// `gst_element_set_start_time`); nil: none (GST_CLOCK_TIME_NONE, the pipeline keeps no time).
    public var startTime: UInt64? {
        get {
            let time = UInt64(gst_element_get_start_time(pointer))
            return time == UInt64.max ? nil : time
        }
        set { gst_element_set_start_time(pointer, GstClockTime(newValue ?? UInt64.max)) }
    }

    /// Runs this pipeline on the system clock instead of the one its elements would choose (a
    /// pulsesink provides one from its stream): `gst_pipeline_use_clock`.
    public func useSystemClock() {
        let clock = gst_system_clock_obtain()
        gst_pipeline_use_clock(UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GstPipeline.self), clock)
        gst_object_unref(clock)
    }

    /// The system clock's time now, in nanoseconds (`gst_clock_get_time`).
    public static var systemClockTime: UInt64 {
        let clock = gst_system_clock_obtain()
        defer { gst_object_unref(clock) }
        return UInt64(gst_clock_get_time(clock))
    }

    /// The clock time that is running time 0 (`gst_element_set_base_time`); kept over PLAYING
    /// only with no `startTime` (GST_CLOCK_TIME_NONE), else recomputed there.
    public var baseTime: UInt64 {
        get { UInt64(gst_element_get_base_time(pointer)) }
        set { gst_element_set_base_time(pointer, GstClockTime(newValue)) }
    }

    /// Waits at most `timeout` for a state change under way (an async preroll) to finish
    /// (`gst_element_get_state`); returns its result (`.async` when it timed out). Blocks: never
    /// call it on a queue that must answer.
    @discardableResult
    public func waitForState(timeout: Duration) -> StateChangeResult {
        let (seconds, attoseconds) = min(max(timeout, .zero), .seconds(86_400)).components
        let nanoseconds = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
        switch gst_element_get_state(pointer, nil, nil, GstClockTime(nanoseconds)) {
        case GST_STATE_CHANGE_SUCCESS: return .success
        case GST_STATE_CHANGE_ASYNC: return .async
        case GST_STATE_CHANGE_NO_PREROLL: return .noPreroll
        default: return .failure
        }
    }

    /// `gst_element_query_position` in time, in nanoseconds.
    public func queryPosition() -> Int64? {
        var position: gint64 = -1
        guard gst_element_query_position(pointer, GST_FORMAT_TIME, &position) != 0, position >= 0 else { return nil }
        return Int64(position)
    }

    /// `gst_element_query_duration` in time, in nanoseconds.
    public func queryDuration() -> Int64? {
        var duration: gint64 = -1
        guard gst_element_query_duration(pointer, GST_FORMAT_TIME, &duration) != 0, duration >= 0 else { return nil }
        return Int64(duration)
    }

    /// The length an audio parser inside this bin estimates from the size of the stream before it
    /// (a DURATION query in bytes on its sink pad's peer, `gst_pad_peer_query_duration`) and the
    /// bitrate of the frames it has seen (a CONVERT query to time on its source pad,
    /// `gst_pad_query_convert`), in nanoseconds; nil when no parser (klass `Codec/Parser/Audio`,
    /// found with `gst_bin_iterate_recurse`) answers. It is what baseparse itself will report once
    /// it has seen a few seconds of frames (gst_base_parse_update_duration): an MP3 without a Xing
    /// or VBRI header answers no duration query before then, at its preroll included.
    public func audioParserDurationEstimate() -> Int64? {
        guard tonearm_is_bin(pointer) != 0,
              let iterator = gst_bin_iterate_recurse(UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GstBin.self))
        else { return nil }
        defer { gst_iterator_free(iterator) }
        var item = GValue()
        defer { if item.g_type != 0 { g_value_unset(&item) } }
        while true {
            let result = gst_iterator_next(iterator, &item)
            if result == GST_ITERATOR_RESYNC {
                gst_iterator_resync(iterator)
                continue
            }
            guard result == GST_ITERATOR_OK else { return nil }
            defer { g_value_reset(&item) }
            guard let object = g_value_get_object(&item) else { continue }
            let element = object.assumingMemoryBound(to: GstElement.self)
            guard let factory = gst_element_get_factory(element),
                  let klass = gst_element_factory_get_metadata(factory, "klass"),
                  String(cString: klass).contains("Parser/Audio") else { continue }
            var bytes: gint64 = -1
            var nanoseconds: gint64 = -1
            if let sink = gst_element_get_static_pad(element, "sink") {
                if gst_pad_peer_query_duration(sink, GST_FORMAT_BYTES, &bytes) == 0 { bytes = -1 }
                gst_object_unref(sink)
            }
            guard bytes > 0, let source = gst_element_get_static_pad(element, "src") else { continue }
            defer { gst_object_unref(source) }
            if gst_pad_query_convert(source, GST_FORMAT_BYTES, bytes, GST_FORMAT_TIME, &nanoseconds) != 0, nanoseconds > 0 {
                return Int64(nanoseconds)
            }
        }
    }

    /// The SEEKING query in time: whether the element can seek now.
    public func querySeekable() -> Bool? { querySeeking()?.seekable }

    /// The SEEKING query in time: whether the element can seek now, and between which times
    /// (nanoseconds) when it names them (nil: unknown, -1 in GStreamer).
    public func querySeeking() -> (seekable: Bool, range: ClosedRange<Int64>?)? {
        guard let query = gst_query_new_seeking(GST_FORMAT_TIME) else { return nil }
        defer { tonearm_query_unref(query) }
        guard gst_element_query(pointer, query) != 0 else { return nil }
        var seekable: gboolean = 0
        var start: gint64 = -1, end: gint64 = -1
        gst_query_parse_seeking(query, nil, &seekable, &start, &end)
        return (seekable != 0, start >= 0 && end >= start ? Int64(start)...Int64(end) : nil)
    }

    /// The BUFFERING query in percent format: the loaded ranges as fractions 0...1 of the whole.
    public func queryBufferedRanges() -> [ClosedRange<Double>]? {
        guard let query = gst_query_new_buffering(GST_FORMAT_PERCENT) else { return nil }
        defer { tonearm_query_unref(query) }
        guard gst_element_query(pointer, query) != 0 else { return nil }
        let max = Double(tonearm_format_percent_max())
        var ranges: [ClosedRange<Double>] = []
        for index in 0..<gst_query_get_n_buffering_ranges(query) {
            var start: gint64 = 0
            var stop: gint64 = 0
            if gst_query_parse_nth_buffering_range(query, index, &start, &stop) != 0, start >= 0, stop >= start {
                ranges.append(Double(start) / max...Double(stop) / max)
            }
        }
        return ranges
    }

    /// Posts a `gap` message (`Message.Kind.gap`) whenever the buffers entering this element's sink
    /// pad jump forward in time by more than `threshold`: a stretch of the stream that never came
    /// (a buffer probe in C, `tonearm_watch_gaps`). False when it has no sink pad.
    @discardableResult
    public func watchForGaps(longerThan threshold: Duration) -> Bool {
        let (seconds, attoseconds) = max(threshold, .zero).components
        return tonearm_watch_gaps(pointer, guint64(seconds) * 1_000_000_000 + guint64(attoseconds / 1_000_000_000)) != 0
    }

    /// Posts a `segmentReached` message (`Message.Kind.segmentReached`, with the seqnum of the seek
    /// that made the segment) each time a new segment enters this element's sink pad (an event
    /// probe in C, `tonearm_watch_segments`): on a sink, when a segment seek's data is next to
    /// render. False when it has no sink pad.
    @discardableResult
    public func watchForSegments() -> Bool {
        tonearm_watch_segments(pointer) != 0
    }

    /// On an ximagesink: draws again once the first image after new caps was drawn, so that the
    /// black borders around a smaller image are painted (`tonearm_redraw_after_caps` says why).
    @discardableResult
    public func redrawAfterCaps() -> Bool {
        tonearm_redraw_after_caps(pointer) != 0
    }

    /// Posts a `streamLevelsChanged` message each time this pulsesink notifies its `volume`: its
    /// stream changed at the sound server (a signal handler in C, `tonearm_watch_stream_levels`).
    /// False when the element has no `volume` property.
    @discardableResult
    public func watchStreamLevels() -> Bool {
        tonearm_watch_stream_levels(pointer) != 0
    }

    /// Unlinks every temporary file an element inside this pipeline makes (a downloadbuffer's
    /// download) as soon as it is made, so that none outlives the pipeline or a killed process
    /// (`tonearm_unlink_temp_files`: a deep-notify handler in C, connected for the element's life).
    public func unlinkTemporaryFiles() {
        tonearm_unlink_temp_files(pointer)
    }

    /// `gst_element_seek` in time from `start` (nanoseconds) to the end.
    public func seek(rate: Double, flags: SeekFlags, start: Int64) -> Bool {
        gst_element_seek(pointer, rate, GST_FORMAT_TIME, GstSeekFlags(rawValue: flags.rawValue),
                         GST_SEEK_TYPE_SET, gint64(start), GST_SEEK_TYPE_NONE, -1) != 0
    }

    /// Like `seek`, and gives the seek event's sequence number (`gst_event_get_seqnum`), which the
    /// messages the seek causes carry (its SEGMENT_DONE); nil when it was refused.
    /// `beforeSending` gets the number before the event is sent: a flushing seek can preroll, and
    /// post its ASYNC_DONE, before `gst_element_send_event` returns.
    public func numberedSeek(rate: Double, flags: SeekFlags, start: Int64,
                             beforeSending: (UInt32) -> Void = { _ in }) -> UInt32? {
        guard let event = gst_event_new_seek(rate, GST_FORMAT_TIME, GstSeekFlags(rawValue: flags.rawValue),
                                             GST_SEEK_TYPE_SET, gint64(start), GST_SEEK_TYPE_NONE, -1) else { return nil }
        let seqnum = gst_event_get_seqnum(event)
        beforeSending(seqnum)
        return gst_element_send_event(pointer, event) != 0 ? seqnum : nil  // the element takes the event
    }

    /// The child called `name` when this is a bin (`gst_bin_get_by_name`), else nil.
    public func child(named name: String) -> Element? {
        guard tonearm_is_bin(pointer) != 0,
              let child = gst_bin_get_by_name(UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GstBin.self), name)
        else { return nil }
        let element = Element(taking: child)  // ref_sink on a reference that is not floating adds one
        gst_object_unref(child)
        return element
    }

    /// The factory names of the element's children when it is a bin (`gst_bin_iterate_elements`).
    public var childFactoryNames: [String] {
        guard tonearm_is_bin(pointer) != 0 else { return [] }
        var names: [String] = []
        let bin = UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GstBin.self)
        var node = bin.pointee.children
        while let current = node {
            let child = current.pointee.data.assumingMemoryBound(to: GstElement.self)
            if let name = tonearm_element_factory_name(child) { names.append(String(cString: name)) }
            node = current.pointee.next
        }
        return names
    }

    /// The element's bus (`gst_element_get_bus`, whose reference the Bus owns).
    public var bus: Bus? { gst_element_get_bus(pointer).map { Bus(taking: $0, pipeline: self) } }

    /// Whether `message` was posted by this element itself.
    func isSource(of message: UnsafeMutablePointer<GstMessage>) -> Bool {
        UnsafeMutableRawPointer(tonearm_message_src(message)) == UnsafeMutableRawPointer(pointer)
    }
}

/// One handler connected to a signal of an element, until `disconnect()`.
public class SignalConnection: @unchecked Sendable {
    // @unchecked: `handlerID` is written once at connect and read at disconnect, both by the
    // element's owner.
    fileprivate var handlerID: gulong = 0
    fileprivate let element: Element
    fileprivate init(_ element: Element) { self.element = element }

    /// `g_signal_handler_disconnect`. Idempotent.
    public func disconnect() {
        guard handlerID != 0 else { return }
        g_signal_handler_disconnect(UnsafeMutableRawPointer(element.pointer), handlerID)
        handlerID = 0
    }
}

/// A `playbin`/`playbin3` and its `about-to-finish` signal.
public final class AboutToFinish: SignalConnection, @unchecked Sendable {
    // @unchecked: `handler` is immutable.
    private let handler: @Sendable () -> Void
    private init(_ element: Element, _ handler: @escaping @Sendable () -> Void) {
        self.handler = handler
        super.init(element)
    }

    /// Connects `handler` to `about-to-finish` on `playbin`. It runs on a streaming thread: it may
    /// set the next `uri` synchronously and must do nothing else (design brief, trap 2). The returned
    /// object must outlive the connection: call `disconnect()` once the element is in NULL (no
    /// streaming thread can emit then), and only then let it go.
    public static func connect(_ playbin: Element, _ handler: @escaping @Sendable () -> Void) -> AboutToFinish {
        let box = AboutToFinish(playbin, handler)
        let callback: @convention(c) (UnsafeMutablePointer<GstElement>?, gpointer?) -> Void = { _, data in
            guard let data else { return }
            Unmanaged<AboutToFinish>.fromOpaque(data).takeUnretainedValue().handler()
        }
        box.handlerID = tonearm_connect_about_to_finish(playbin.pointer, callback, Unmanaged.passUnretained(box).toOpaque())
        return box
    }
}

/// Sets unsigned and signed integer properties on each source element playbin makes, where the
/// source has them (`source-setup`): souphttpsrc's `timeout` and `retries` for two. With `downloadSteps` above 0, an HTTP
/// source of a known size posts a `downloaded` message (`Message.Kind.downloaded`) each time its
/// download passes the next of that many equal parts, and at its end (a buffer probe in C,
/// `tonearm_watch_download`). Like `AboutToFinish`, the returned object must outlive the
/// connection; `disconnect()` once the element is in NULL.
public final class SourceSetup: SignalConnection, @unchecked Sendable {
    // @unchecked: `values`, `signedValues` and `downloadSteps` are immutable.
    private let values: [(name: String, value: UInt32)]
    private let signedValues: [(name: String, value: Int32)]
    private let downloadSteps: UInt32
    private init(_ element: Element, _ values: [(name: String, value: UInt32)], _ signedValues: [(name: String, value: Int32)],
                 downloadSteps: UInt32) {
        self.values = values
        self.signedValues = signedValues
        self.downloadSteps = downloadSteps
        super.init(element)
    }

    public static func connect(_ playbin: Element, unsignedProperties values: [(name: String, value: UInt32)],
                               signedProperties signedValues: [(name: String, value: Int32)] = [],
                               downloadSteps: UInt32 = 0) -> SourceSetup {
        let box = SourceSetup(playbin, values, signedValues, downloadSteps: downloadSteps)
        // source-setup runs on whichever thread builds the source (a state change, a streaming
        // thread): it only sets properties on the new element, which nothing else uses yet
        let callback: @convention(c) (UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstElement>?, gpointer?) -> Void = { _, source, data in
            guard let source, let data else { return }
            let box = Unmanaged<SourceSetup>.fromOpaque(data).takeUnretainedValue()
            for (name, value) in box.values where tonearm_has_property(source, name) != 0 {
                tonearm_set_uint(source, name, guint(value))
            }
            for (name, value) in box.signedValues where tonearm_has_property(source, name) != 0 {
                tonearm_set_int(source, name, gint(value))
            }
            tonearm_watch_download(source, guint(box.downloadSteps))
        }
        box.handlerID = tonearm_connect_source_setup(playbin.pointer, callback, Unmanaged.passUnretained(box).toOpaque())
        return box
    }
}
