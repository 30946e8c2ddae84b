import Glibc

/// The process's environment variables, read from `environ` as bytes.
///
/// FoundationEssentials' `ProcessInfo.processInfo.environment` builds its dictionary Character by
/// Character at every read: some 375,000 instructions for 43 variables, and tonearmd's start read it
/// 14 times, 15% of the start's instructions (callgrind, issue 30). This reads the same variables
/// afresh at each call, as that does (so a `setenv` is seen), byte by byte.
public enum Environment {
    /// Every `NAME=value` of `environ`; the first of a repeated name, as `getenv` finds.
    public static func variables() -> [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            entry += 1
            let bytes = UnsafeRawBufferPointer(start: pointer, count: strlen(pointer))
            guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let name = String(decoding: bytes[..<equals], as: UTF8.self)
            if result[name] == nil {
                result[name] = String(decoding: bytes[(equals + 1)...], as: UTF8.self)
            }
        }
        return result
    }
}
