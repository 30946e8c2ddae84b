import CGStreamer

/// Read-only questions to GStreamer's plugin registry: which element factories and typefinders
/// are installed, and which URI schemes have a source. Values are copied out at once; no policy.
public enum Registry {
    /// Kinds of element factory (`GstElementFactoryListType`).
    public struct FactoryKind: OptionSet, Sendable {
        public let rawValue: UInt64
        public init(rawValue: UInt64) { self.rawValue = rawValue }
        public static let decoder = FactoryKind(rawValue: UInt64(tonearm_factory_type_decoder()))
        public static let demuxer = FactoryKind(rawValue: UInt64(tonearm_factory_type_demuxer()))
        public static let parser = FactoryKind(rawValue: UInt64(tonearm_factory_type_parser()))
    }

    /// Plugin feature ranks (`GstRank`): autoplugging (decodebin, playbin) skips ranks below marginal.
    public enum Rank {
        public static let none: UInt32 = 0
        public static let marginal: UInt32 = 64
        public static let secondary: UInt32 = 128
        public static let primary: UInt32 = 256
    }

    /// One element factory as the registry describes it.
    public struct ElementFactory: Sendable, Equatable {
        public var name: String
        /// The klass metadata, such as `Codec/Decoder/Audio`.
        public var klass: String
        public var rank: UInt32
        /// The structure names of its sink pad templates' caps (`audio/mpeg`), without ANY caps.
        public var sinkMediaTypes: [String]
    }

    /// One typefinder: the media types it detects and the file extensions it knows for them.
    public struct TypeFinder: Sendable, Equatable {
        public var name: String
        public var mediaTypes: [String]
        /// As the plugin spells them (`mp3`, `MPD`).
        public var extensions: [String]
    }

    /// Whether a source element handles `scheme` (`gst_uri_protocol_is_supported` with `GST_URI_SRC`).
    public static func hasSource(forScheme scheme: String) -> Bool {
        GStreamer.initialize()
        return gst_uri_protocol_is_supported(GST_URI_SRC, scheme) != 0
    }

    /// The element factories of any of `kinds` whose rank is at least `minimumRank`
    /// (`gst_element_factory_list_get_elements`; the list is freed here).
    public static func elementFactories(_ kinds: FactoryKind, minimumRank: UInt32 = Rank.marginal) -> [ElementFactory] {
        GStreamer.initialize()
        let list = gst_element_factory_list_get_elements(GstElementFactoryListType(kinds.rawValue),
                                                         GstRank(rawValue: minimumRank))
        defer { gst_plugin_feature_list_free(list) }
        var factories: [ElementFactory] = []
        var node = list
        while let current = node {
            node = current.pointee.next
            guard let factory = OpaquePointer(current.pointee.data), let name = tonearm_feature_name(factory) else { continue }
            let klass = gst_element_factory_get_metadata(factory, "klass").map { String(cString: $0) } ?? ""
            factories.append(ElementFactory(name: String(cString: name), klass: klass,
                                            rank: tonearm_feature_get_rank(factory),
                                            sinkMediaTypes: sinkMediaTypes(of: factory)))
        }
        return factories
    }

    /// Every registered typefinder (`gst_type_find_factory_get_list`; the list is freed here, the
    /// caps and extensions stay owned by their factory).
    public static func typeFinders() -> [TypeFinder] {
        GStreamer.initialize()
        let list = gst_type_find_factory_get_list()
        defer { gst_plugin_feature_list_free(list) }
        var finders: [TypeFinder] = []
        var node = list
        while let current = node {
            node = current.pointee.next
            guard let factory = OpaquePointer(current.pointee.data) else { continue }
            let name = tonearm_type_find_factory_name(factory).map { String(cString: $0) } ?? ""
            let mediaTypes = gst_type_find_factory_get_caps(factory).map(structureNames) ?? []
            var extensions: [String] = []
            if var cursor = gst_type_find_factory_get_extensions(factory) {
                while let pointer = cursor.pointee {
                    extensions.append(String(cString: pointer))
                    cursor += 1
                }
            }
            finders.append(TypeFinder(name: name, mediaTypes: mediaTypes, extensions: extensions))
        }
        return finders
    }

    /// The sink pad templates' caps structure names of an element factory.
    private static func sinkMediaTypes(of factory: OpaquePointer) -> [String] {
        var names: [String] = []
        var node = gst_element_factory_get_static_pad_templates(factory)
        while let current = node {
            node = UnsafePointer(current.pointee.next)
            let template = current.pointee.data.assumingMemoryBound(to: GstStaticPadTemplate.self)
            guard template.pointee.direction == GST_PAD_SINK else { continue }
            // gst_static_caps_get returns a new reference
            guard let caps = gst_static_caps_get(&template.pointee.static_caps) else { continue }
            defer { tonearm_caps_unref(caps) }
            for name in structureNames(caps) where !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// The names of a caps' structures, none for ANY or EMPTY caps (not consumed).
    private static func structureNames(_ caps: UnsafeMutablePointer<GstCaps>) -> [String] {
        guard gst_caps_is_any(caps) == 0 else { return [] }
        var names: [String] = []
        for index in 0..<gst_caps_get_size(caps) {
            guard let structure = gst_caps_get_structure(caps, index), let name = gst_structure_get_name(structure)
            else { continue }
            let text = String(cString: name)
            if !names.contains(text) { names.append(text) }
        }
        return names
    }
}
