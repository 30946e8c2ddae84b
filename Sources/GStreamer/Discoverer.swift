import Basics
import CGStreamer
import FoundationEssentials

/// What GstDiscoverer found in a URI, copied out of its `GstDiscovererInfo` at once.
public struct DiscovererInfo: Sendable, Equatable {
    public var uri: String
    /// In nanoseconds; nil when unknown (`GST_CLOCK_TIME_NONE`), as for most live streams.
    public var duration: Int64?
    public var isSeekable: Bool
    public var isLive: Bool
    /// The container's (global) tags merged with every stream's: the first value list seen for a
    /// tag wins, so global tags come before stream tags.
    public var tags: TagList
    public var hasAudio: Bool
    /// A video stream that is not a single image (a cover picture is not video).
    public var hasVideo: Bool

    public init(uri: String, duration: Int64?, isSeekable: Bool, isLive: Bool, tags: TagList,
                hasAudio: Bool, hasVideo: Bool) {
        self.uri = uri
        self.duration = duration
        self.isSeekable = isSeekable
        self.isLive = isLive
        self.tags = tags
        self.hasAudio = hasAudio
        self.hasVideo = hasVideo
    }
}

/// Why a discovery failed (`GstDiscovererResult`), with GStreamer's error.
public struct DiscovererFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable {
        /// GST_DISCOVERER_URI_INVALID: no source for the URI, or it is malformed.
        case invalidURI
        /// GST_DISCOVERER_ERROR: `error` says what.
        case error
        /// GST_DISCOVERER_TIMEOUT: nothing decisive within the discoverer's timeout.
        case timeout
        /// GST_DISCOVERER_BUSY.
        case busy
        /// GST_DISCOVERER_MISSING_PLUGINS: `missingPlugins` names them.
        case missingPlugins
    }

    public var reason: Reason
    /// The `GError` the discoverer returned, or one made here when it gave none (timeout, missing plugins).
    public var error: GStreamerError
    /// Human descriptions of the plugins a full discovery needed (`MP3 decoder`), from the
    /// installer details (`gst_discoverer_info_get_missing_elements_installer_details`).
    public var missingPlugins: [String]

    public init(reason: Reason, error: GStreamerError, missingPlugins: [String] = []) {
        self.reason = reason
        self.error = error
        self.missingPlugins = missingPlugins
    }

    public var description: String { "\(reason): \(error)" + (missingPlugins.isEmpty ? "" : " (missing \(missingPlugins))") }
}

public typealias DiscovererResult = Result<DiscovererInfo, DiscovererFailure>

/// A `GstDiscoverer` used synchronously (`gst_discoverer_discover_uri`): each call blocks until the
/// URI is analysed or the timeout passes, and needs no GLib main loop (the discoverer pops its own
/// bus). Calls on one instance are serialised; run them on a background queue and use one instance
/// per concurrent discovery.
public final class Discoverer: @unchecked Sendable {
    // @unchecked: `pointer` is immutable, and every call on it runs under `lock`.
    private let pointer: UnsafeMutablePointer<GstDiscoverer>
    // gst_discoverer_discover_uri drives one pipeline: one call at a time per discoverer
    private let lock = Lock()
    public let timeout: Duration

    /// `gst_discoverer_new` with `timeout` per URI, clamped to 1 s...1 h; the discoverer is released
    /// on deinit.
    public init(timeout: Duration = .seconds(5)) throws {
        GStreamer.initialize()
        // the timeout property takes 1 s to 1 h (gstdiscoverer.c); outside, GObject keeps the 15 s default
        let clamped = min(max(timeout, .seconds(1)), .seconds(3600))
        self.timeout = clamped
        let (seconds, attoseconds) = clamped.components
        let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        var error: UnsafeMutablePointer<GError>?
        let discoverer = gst_discoverer_new(GstClockTime(nanoseconds), &error)
        if let error {
            defer { g_error_free(error) }
            if let discoverer { g_object_unref(discoverer) }
            throw GStreamerError(error)
        }
        guard let discoverer else {
            throw GStreamerError(domain: GStreamerError.coreDomain, code: 0, message: "could not create a GstDiscoverer")
        }
        pointer = discoverer
    }

    deinit { g_object_unref(pointer) }

    /// Analyses `uri` (`gst_discoverer_discover_uri`), blocking for up to the timeout. The info and
    /// error it returns are copied into Swift values and freed before this returns.
    public func discover(_ uri: String) -> DiscovererResult {
        lock.lock()
        defer { lock.unlock() }
        var error: UnsafeMutablePointer<GError>?
        let info = gst_discoverer_discover_uri(pointer, uri, &error)
        defer {
            if let error { g_error_free(error) }
            if let info { g_object_unref(UnsafeMutableRawPointer(info)) }
        }
        let copiedError = error.map { GStreamerError($0) }
        guard let info else {
            return .failure(DiscovererFailure(
                reason: .error,
                error: copiedError ?? GStreamerError(domain: GStreamerError.coreDomain, code: 0,
                                                     message: "the discoverer returned nothing for \(uri)")))
        }
        switch gst_discoverer_info_get_result(info) {
        case GST_DISCOVERER_OK:
            return .success(Discoverer.copy(info, uri: uri))
        case GST_DISCOVERER_URI_INVALID:
            return .failure(DiscovererFailure(
                reason: .invalidURI,
                error: copiedError ?? GStreamerError(domain: GStreamerError.resourceDomain, code: 3,  // NOT_FOUND
                                                     message: "no GStreamer source can read \(uri)")))
        case GST_DISCOVERER_TIMEOUT:
            return .failure(DiscovererFailure(
                reason: .timeout,
                error: copiedError ?? GStreamerError(domain: GStreamerError.resourceDomain, code: 9,  // READ
                                                     message: "timed out after \(timeout) reading \(uri)")))
        case GST_DISCOVERER_BUSY:
            return .failure(DiscovererFailure(
                reason: .busy,
                error: copiedError ?? GStreamerError(domain: GStreamerError.coreDomain, code: 0,
                                                     message: "the discoverer is busy")))
        case GST_DISCOVERER_MISSING_PLUGINS:
            let missing = Discoverer.missingPlugins(info)
            return .failure(DiscovererFailure(
                reason: .missingPlugins,
                error: copiedError ?? GStreamerError(domain: GStreamerError.coreDomain, code: 12,  // MISSING_PLUGIN
                                                     message: "missing plugins: \(missing.joined(separator: ", "))"),
                missingPlugins: missing))
        default:  // GST_DISCOVERER_ERROR
            return .failure(DiscovererFailure(
                reason: .error,
                error: copiedError ?? GStreamerError(domain: GStreamerError.coreDomain, code: 0,
                                                     message: "could not discover \(uri)")))
        }
    }

    // MARK: Copying out of GstDiscovererInfo (nothing here outlives the info)

    private static func copy(_ info: OpaquePointer, uri: String) -> DiscovererInfo {
        let duration = gst_discoverer_info_get_duration(info)
        var tags = TagList()
        // global tags live on the container streams since 1.20 (gst_discoverer_info_get_tags is deprecated)
        let containers = gst_discoverer_info_get_container_streams(info)
        defer { gst_discoverer_stream_info_list_free(containers) }
        forEach(containers) { stream in
            if let list = gst_discoverer_container_info_get_tags(stream) { tags.add(TagList(UnsafeMutablePointer(mutating: list))) }
        }
        let streams = gst_discoverer_info_get_stream_list(info)
        defer { gst_discoverer_stream_info_list_free(streams) }
        forEach(streams) { stream in
            if let list = gst_discoverer_stream_info_get_tags(stream) { tags.add(TagList(UnsafeMutablePointer(mutating: list))) }
        }
        let audio = gst_discoverer_info_get_audio_streams(info)
        defer { gst_discoverer_stream_info_list_free(audio) }
        let video = gst_discoverer_info_get_video_streams(info)
        defer { gst_discoverer_stream_info_list_free(video) }
        var hasVideo = false
        forEach(video) { stream in
            if gst_discoverer_video_info_is_image(stream) == 0 { hasVideo = true }
        }
        return DiscovererInfo(uri: uri,
                              duration: duration == GstClockTime.max ? nil : Int64(clamping: duration),  // GST_CLOCK_TIME_NONE
                              isSeekable: gst_discoverer_info_get_seekable(info) != 0,
                              isLive: gst_discoverer_info_get_live(info) != 0,
                              tags: tags, hasAudio: audio != nil, hasVideo: hasVideo)
    }

    /// Calls `body` with each element of a GList of stream infos (not consumed).
    private static func forEach(_ list: UnsafeMutablePointer<GList>?, _ body: (OpaquePointer) -> Void) {
        var node = list
        while let current = node {
            if let data = current.pointee.data { body(OpaquePointer(data)) }
            node = current.pointee.next
        }
    }

    /// The description field of each installer detail string
    /// (`gstreamer|1.0|app|description|decoder-caps`, gst/pbutils/missing-plugins.c).
    private static func missingPlugins(_ info: OpaquePointer) -> [String] {
        guard var cursor = gst_discoverer_info_get_missing_elements_installer_details(info) else { return [] }
        var descriptions: [String] = []
        while let detail = cursor.pointee {
            let fields = String(utf8Repairing: detail).split(separator: "|", omittingEmptySubsequences: false)
            descriptions.append(fields.count > 3 ? String(fields[3]) : fields.joined(separator: "|"))
            cursor += 1
        }
        return descriptions
    }
}

extension TagList {
    /// Adds the tags of `other` that this list does not have yet.
    mutating func add(_ other: TagList) {
        for (name, list) in other.values where values[name] == nil { values[name] = list }
    }
}
