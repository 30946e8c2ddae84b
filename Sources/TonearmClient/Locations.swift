import FoundationEssentials

/// What a person types for a track: a path (relative or absolute) or a URI.
public enum MediaLocation {
    /// True when `text` starts with a URI scheme (`file:`, `http:`, ...: RFC 3986's
    /// `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"`) followed by `//`, so `a:b.mp3` stays a path.
    public static func isURI(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { return false }
        let scheme = text[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter else { return false }
        return scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
    }

    /// The URI for `text`: a URI as it is, a path made absolute against `directory` (the current
    /// directory when nil) and turned into a `file://` URI.
    public static func uri(for text: String, relativeTo directory: String? = nil) -> String {
        if isURI(text) { return text }
        return URL(fileURLWithPath: absolutePath(text, relativeTo: directory)).absoluteString
    }

    /// `text` as an absolute, standardized path (`.` and `..` resolved, symbolic links kept).
    public static func absolutePath(_ text: String, relativeTo directory: String? = nil) -> String {
        let base = URL(fileURLWithPath: directory ?? FileManager.default.currentDirectoryPath, isDirectory: true)
        // `standardized` removes dot segments only; symbolic links are the service's to follow
        return URL(fileURLWithPath: text, relativeTo: base).absoluteURL.standardized.path
    }

    /// The paths among `texts` (URIs are left to the service) that name nothing on disk, as typed.
    public static func missingFiles(_ texts: [String], relativeTo directory: String? = nil) -> [String] {
        texts.filter { !isURI($0) && !FileManager.default.fileExists(atPath: absolutePath($0, relativeTo: directory)) }
    }
}
