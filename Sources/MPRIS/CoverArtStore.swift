import Foundation
import PlayerModel

/// Where clients find cover art: an embedded image written once to a content-addressed file under
/// `$XDG_CACHE_HOME/tonearm/covers/`, or a cover image beside a local file. Clients get a `file://`
/// URL (KDE Connect forwards only file://; data: URLs break some shells).
final class CoverArtStore {
    private let directory: URL
    /// Item to (image bytes, file) so a cover is hashed and written once.
    private var written: [ItemID: (data: Data, url: URL)] = [:]
    /// The cover found beside the files of a folder (nil: none), so adding a whole album stats
    /// its folder once, not 32 times per track. Bounded; a cover added later is seen once the
    /// cache was cleared.
    private var besideByFolder: [String: URL?] = [:]
    private static let besideCacheLimit = 512
    private static let besideNames = ["cover", "folder", "front", "album", "Cover", "Folder", "Front", "Album"]
    private static let besideExtensions = ["jpg", "jpeg", "png", "webp"]

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let cache = environment["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? ((environment["HOME"] ?? NSTemporaryDirectory()) as NSString).appendingPathComponent(".cache")
        directory = URL(fileURLWithPath: cache).appendingPathComponent("tonearm/covers")
    }

    /// A file URL for the item's cover, or nil.
    func url(for item: Item) -> URL? {
        if let cover = item.metadata.cover, let url = store(cover, for: item.id) { return url }
        return beside(item.uri)
    }

    func forget(_ id: ItemID) { written[id] = nil }
    func forgetAll() { written.removeAll() }

    private func store(_ cover: CoverImage, for id: ItemID) -> URL? {
        if let known = written[id], known.data == cover.data { return known.url }
        let ext = switch cover.mediaType {
        case "image/png": "png"
        case "image/gif": "gif"
        case "image/webp": "webp"
        default: "jpg"
        }
        let file = directory.appendingPathComponent("\(Self.digest(cover.data)).\(ext)")
        if !FileManager.default.fileExists(atPath: file.path) {
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                // written under a temporary name and renamed, so a reader never sees half a file
                let temporary = directory.appendingPathComponent(".\(UUID().uuidString)")
                try cover.data.write(to: temporary)
                try FileManager.default.moveItem(at: temporary, to: file)
            } catch {
                if !FileManager.default.fileExists(atPath: file.path) { return nil }
            }
        }
        written[id] = (cover.data, file)
        return file
    }

    private func beside(_ uri: MediaURI) -> URL? {
        guard let path = uri.path else { return nil }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        if let known = besideByFolder[folder.path] { return known }
        if besideByFolder.count >= Self.besideCacheLimit { besideByFolder.removeAll(keepingCapacity: true) }
        let found = Self.besideNames.lazy.flatMap { name in Self.besideExtensions.lazy.map { (name, $0) } }
            .map { folder.appendingPathComponent("\($0.0).\($0.1)") }
            .first { FileManager.default.fileExists(atPath: $0.path) }
        besideByFolder[folder.path] = .some(found)
        return found
    }

    /// Two independent FNV-1a 64-bit hashes and the length: a content address, not a security hash.
    static func digest(_ data: Data) -> String {
        var a: UInt64 = 0xcbf2_9ce4_8422_2325, b: UInt64 = 0x8422_2325_cbf2_9ce4
        for byte in data {
            a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            b = (b &* 0x0000_0100_0000_01b3) ^ UInt64(byte)
        }
        return String(format: "%016llx%016llx-%llx", a, b, UInt64(data.count))
    }
}
