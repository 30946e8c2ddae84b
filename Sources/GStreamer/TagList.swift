import Basics
import CGStreamer
import FoundationEssentials

/// A tag list copied into Swift. Strings are repaired to valid UTF-8 here, at the boundary.
public struct TagList: Sendable, Equatable {
    public enum Value: Sendable, Equatable {
        case string(String)
        case unsigned(UInt64)
        case signed(Int64)
        case double(Double)
        /// A GstDateTime or GDate, as ISO 8601 text (`2024`, `2024-05`, `2024-05-17`).
        case date(String)
        /// A sample such as a cover image: its bytes and its caps' media type (`image/jpeg`).
        case sample(data: Data, mediaType: String)
    }

    /// Tag name (`title`, `artist`, `image`, ...) to its values in order.
    public var values: [String: [Value]]

    public init(values: [String: [Value]] = [:]) { self.values = values }

    public func strings(_ tag: String) -> [String] {
        (values[tag] ?? []).compactMap { if case .string(let value) = $0 { value } else { nil } }
    }

    public func string(_ tag: String) -> String? { strings(tag).first }

    public func unsigned(_ tag: String) -> UInt64? {
        for value in values[tag] ?? [] {
            switch value {
            case .unsigned(let number): return number
            case .signed(let number) where number >= 0: return UInt64(number)
            default: continue
            }
        }
        return nil
    }

    public func date(_ tag: String) -> String? {
        for case .date(let text) in values[tag] ?? [] { return text }
        return nil
    }

    public func samples(_ tag: String) -> [(data: Data, mediaType: String)] {
        (values[tag] ?? []).compactMap { if case .sample(let data, let type) = $0 { (data, type) } else { nil } }
    }

    /// Copies every tag of `list` (not consumed).
    init(_ list: UnsafeMutablePointer<GstTagList>) {
        var values: [String: [Value]] = [:]
        for index in 0..<gst_tag_list_n_tags(list) {
            guard let namePointer = gst_tag_list_nth_tag_name(list, UInt32(index)) else { continue }
            let name = String(cString: namePointer)
            var copied: [Value] = []
            for valueIndex in 0..<gst_tag_list_get_tag_size(list, namePointer) {
                guard let gvalue = gst_tag_list_get_value_index(list, namePointer, valueIndex) else { continue }
                if let value = TagList.copy(gvalue) { copied.append(value) }
            }
            if !copied.isEmpty { values[name] = copied }
        }
        self.values = values
    }

    private static func copy(_ value: UnsafePointer<GValue>) -> Value? {
        let type = value.pointee.g_type
        // GType constants for fundamental types: G_TYPE_MAKE_FUNDAMENTAL(n) = n << 2 (gtype.h).
        switch type {
        case GType(16 << 2): // G_TYPE_STRING
            return g_value_get_string(value).map { .string(String(utf8Repairing: $0)) }
        case GType(7 << 2): // G_TYPE_UINT
            return .unsigned(UInt64(g_value_get_uint(value)))
        case GType(6 << 2): // G_TYPE_INT
            return .signed(Int64(g_value_get_int(value)))
        case GType(11 << 2): // G_TYPE_UINT64
            return .unsigned(UInt64(g_value_get_uint64(value)))
        case GType(10 << 2): // G_TYPE_INT64
            return .signed(Int64(g_value_get_int64(value)))
        case GType(15 << 2): // G_TYPE_DOUBLE
            return .double(g_value_get_double(value))
        default:
            break
        }
        if type == gst_date_time_get_type() {
            guard let dateTime = g_value_get_boxed(value) else { return nil }
            let pointer = OpaquePointer(dateTime)
            guard let text = gst_date_time_to_iso8601_string(pointer) else { return nil }
            defer { g_free(text) }
            return .date(String(utf8Repairing: text))
        }
        if type == g_date_get_type() {
            guard let boxed = g_value_get_boxed(value) else { return nil }
            let date = boxed.assumingMemoryBound(to: GDate.self)
            guard g_date_valid(date) != 0 else { return nil }
            let year = g_date_get_year(date), month = g_date_get_month(date).rawValue, day = g_date_get_day(date)
            return .date("\(Digits.padded(Int(year), width: 4))-\(Digits.padded(Int(month), width: 2))-\(Digits.padded(Int(day), width: 2))")
        }
        if type == gst_sample_get_type() {
            guard let boxed = g_value_get_boxed(value) else { return nil }
            let sample = OpaquePointer(boxed)
            guard let buffer = gst_sample_get_buffer(sample) else { return nil }
            var map = GstMapInfo()
            guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else { return nil }
            defer { gst_buffer_unmap(buffer, &map) }
            let data = Data(bytes: map.data, count: Int(map.size))
            var mediaType = "application/octet-stream"
            if let caps = gst_sample_get_caps(sample), gst_caps_get_size(caps) > 0,
               let structure = gst_caps_get_structure(caps, 0), let name = gst_structure_get_name(structure) {
                mediaType = String(cString: name)
            }
            return .sample(data: data, mediaType: mediaType)
        }
        return nil
    }
}
