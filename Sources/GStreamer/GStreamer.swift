import CGStreamer
import CGStreamerCallbacks

/// Process-wide GStreamer set-up.
public enum GStreamer {
    private static let initialized: Bool = {
        gst_init(nil, nil)
        return true
    }()

    /// Calls `gst_init` once per process; every wrapper type calls it before touching GStreamer.
    public static func initialize() { _ = initialized }

    /// The runtime version, from `gst_version_string` (owned by us, freed here).
    public static var version: String {
        initialize()
        guard let cString = gst_version_string() else { return "unknown" }
        defer { g_free(cString) }
        return String(cString: cString)
    }

    /// The runtime version as numbers (`gst_version`): major, minor, micro.
    public static var versionNumbers: (major: Int, minor: Int, micro: Int) {
        var major: guint = 0, minor: guint = 0, micro: guint = 0, nano: guint = 0
        gst_version(&major, &minor, &micro, &nano)
        return (Int(major), Int(minor), Int(micro))
    }

    /// Whether an element factory of this name is registered (`gst_element_factory_find`).
    public static func hasElement(_ factoryName: String) -> Bool {
        initialize()
        guard let factory = gst_element_factory_find(factoryName) else { return false }
        gst_object_unref(UnsafeMutableRawPointer(factory))
        return true
    }

    /// Sets the rank of an element factory (`gst_plugin_feature_set_rank`), which decides whether
    /// `playbin` autoplugs it: rank 0 (NONE) hides a decoder. Returns the previous rank, nil if the
    /// factory is unknown.
    @discardableResult
    public static func setRank(ofElement factoryName: String, to rank: UInt32) -> UInt32? {
        initialize()
        guard let factory = gst_element_factory_find(factoryName) else { return nil }
        defer { gst_object_unref(UnsafeMutableRawPointer(factory)) }
        let previous = tonearm_feature_get_rank(factory)
        tonearm_feature_set_rank(factory, rank)
        return previous
    }

    /// Has every element `factoryName` makes from now on in this process start with its int
    /// property `property` at `value`, however it is made (`tonearm_set_int_default`: a wrapped
    /// `constructed`). False when the factory, or a writable int property of that name, does not exist.
    @discardableResult
    public static func setDefault(ofElement factoryName: String, property: String, to value: Int32) -> Bool {
        initialize()
        return tonearm_set_int_default(factoryName, property, gint(value)) != 0
    }

    /// Removes the typefinders of the plugin named `plugin` from this process's registry
    /// (`gst_registry_remove_feature`), without loading the plugin; the registry cache on disk
    /// keeps them. Returns their names.
    @discardableResult
    public static func removeTypeFinders(ofPlugin plugin: String) -> [String] {
        initialize()
        let registry = gst_registry_get()
        let list = gst_registry_get_feature_list_by_plugin(registry, plugin)
        defer { gst_plugin_feature_list_free(list) }
        var removed: [String] = []
        var node = list
        while let current = node {
            node = current.pointee.next
            guard let feature = OpaquePointer(current.pointee.data), tonearm_is_type_find_factory(feature) != 0
            else { continue }
            if let name = tonearm_type_find_factory_name(feature) { removed.append(String(cString: name)) }
            gst_registry_remove_feature(registry, feature)
        }
        return removed
    }

    /// Registers Tonearm's own DSF typefinder (`tonearm_dsf`, see the shim) at `rank`; false if
    /// GStreamer refused it.
    @discardableResult
    public static func registerDSFTypeFinder(rank: UInt32) -> Bool {
        initialize()
        return tonearm_register_dsf_type_find(rank) != 0
    }

    /// The decoders whose sink caps can take `caps` (a caps string such as `audio/x-opus`).
    public static func decoders(accepting caps: String) -> [String] {
        initialize()
        guard let parsed = gst_caps_from_string(caps) else { return [] }
        defer { gst_mini_object_unref(UnsafeMutableRawPointer(parsed).assumingMemoryBound(to: GstMiniObject.self)) }
        let list = tonearm_decoder_factories()
        defer { gst_plugin_feature_list_free(list) }
        var names: [String] = []
        var node = list
        while let current = node {
            let factory = OpaquePointer(current.pointee.data)
            if gst_element_factory_can_sink_any_caps(factory, parsed) != 0, let name = tonearm_feature_name(factory) {
                names.append(String(cString: name))
            }
            node = current.pointee.next
        }
        return names
    }
}

/// A `GError` copied into Swift: its domain as a string, its code and message.
public struct GStreamerError: Error, Sendable, Equatable, CustomStringConvertible {
    public var domain: String
    public var code: Int32
    public var message: String
    public var debug: String?
    public var source: String?
    /// The HTTP status an adaptive demuxer put in the error's details (`http-status-code`:
    /// adaptivedemux2, hlsdemux2's base, does when fragments cannot be downloaded), and the URI
    /// when it names one.
    public var httpStatus: Int?
    public var httpURI: String?

    public init(domain: String, code: Int32, message: String, debug: String? = nil, source: String? = nil) {
        self.domain = domain
        self.code = code
        self.message = message
        self.debug = debug
        self.source = source
    }

    /// Copies a `GError` (not consumed; the caller frees it).
    init(_ error: UnsafeMutablePointer<GError>, debug: String? = nil, source: String? = nil) {
        domain = g_quark_to_string(error.pointee.domain).map { String(cString: $0) } ?? "unknown"
        code = error.pointee.code
        message = error.pointee.message.map { String(utf8Repairing: $0) } ?? ""
        self.debug = debug
        self.source = source
    }

    public var description: String { "\(domain) \(code): \(message)" }

    // Domains, as g_quark_to_string gives them (gst/gsterror.h).
    public static let coreDomain = "gst-core-error-quark"
    public static let libraryDomain = "gst-library-error-quark"
    public static let resourceDomain = "gst-resource-error-quark"
    public static let streamDomain = "gst-stream-error-quark"
}

extension String {
    /// A string from C bytes that may not be UTF-8 (tags are not UTF-8-clean): invalid sequences
    /// become U+FFFD, so nothing downstream (libdbus aborts on invalid UTF-8) ever sees them.
    public init(utf8Repairing cString: UnsafePointer<CChar>) {
        let length = strlen(cString)
        self = cString.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }
}
