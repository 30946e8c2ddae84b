import Basics
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import PlayerModel

/// One playlist the catalog knows: a file in one of its folders.
public struct PlaylistEntry: Sendable, Equatable {
    /// Stable across restarts: the same file (path) keeps its id, which the saved state remembers.
    public var id: UInt64
    public var path: String
    /// The title the file carries (`#PLAYLIST:` in an extended M3U, `<title>` in XSPF), else its
    /// name without the extension; a saved queue's, the name given to SaveQueue.
    public var name: String
    public var modified: Date
    /// The file's birth time where the file system keeps one (statx), else when the catalog first
    /// saw it (remembered in the saved state).
    public var created: Date
    /// When it was last activated; nil: never.
    public var lastPlayed: Date?
}

/// The playlist files in a few folders (`$XDG_MUSIC_DIR/Playlists`, a configured one, the saved
/// queues), kept current through inotify: a file that is added, rewritten, renamed or deleted is
/// noticed by its own event, never by listing a folder again (only a folder that comes, or an
/// overflowed event queue, IN_Q_OVERFLOW, is listed). A folder that does not exist is waited
/// for through a watch on its nearest existing ancestor. Everything here runs on its own queue (`tonearm.playlists`),
/// never on the one that answers D-Bus; changes go to `onChange` as a whole list (a few hundred
/// entries at most) and the entries that were rewritten.
public final class PlaylistCatalog: @unchecked Sendable {
    // @unchecked: every mutable field is confined to `queue`.
    public let directories: [URL]
    /// Where SaveQueue writes (one of `directories`).
    public let savedQueues: URL
    private let logger: Logger
    private let queue = DispatchQueue(label: "tonearm.playlists", qos: .utility)
    private var entries: [String: PlaylistEntry] = [:]
    /// Every path ever given an id (those of the saved state, and those seen since), kept when its
    /// file goes: a file that comes back (a folder removed and made again) gets its id back.
    private var records: [String: PlaylistRecord] = [:]
    private var nextID: UInt64 = 1
    /// Told of each record that is new or changed, on the catalog's queue (to save it).
    private let onRecord: (@Sendable (PlaylistRecord) -> Void)?
    private var inotify: Int32 = -1
    private var source: DispatchSourceRead?
    private var onChange: (@Sendable ([PlaylistEntry], [PlaylistEntry]) -> Void)?
    /// Saved queues written here whose inotify event has not come yet.
    private var savedHere: Set<String> = []

    /// `remembered`: the records of the saved state, so that every file keeps the id it had;
    /// `onRecord` is told of each new or changed one.
    public init(directories: [URL], savedQueues: URL, remembered: [PlaylistRecord] = [],
                onRecord: (@Sendable (PlaylistRecord) -> Void)? = nil, logger: Logger) {
        var unique: [URL] = []
        for directory in directories + [savedQueues] where !unique.contains(where: { $0.standardizedFileURL == directory.standardizedFileURL }) {
            unique.append(directory)
        }
        self.directories = unique
        self.savedQueues = savedQueues
        self.logger = logger
        self.onRecord = onRecord
        for record in remembered where records[record.path] == nil {
            records[record.path] = record
            nextID = max(nextID, record.id &+ 1)
        }
    }

    deinit {
        source?.cancel()
    }

    /// `$XDG_MUSIC_DIR/Playlists`: XDG_MUSIC_DIR from the environment, else from
    /// `$XDG_CONFIG_HOME/user-dirs.dirs` (xdg-user-dirs: `XDG_MUSIC_DIR="$HOME/Music"`), else ~/Music.
    public static func musicPlaylists(environment: [String: String] = Environment.variables()) -> URL {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? Path.homeDirectory()
        if let music = environment["XDG_MUSIC_DIR"], music.hasPrefix("/") {
            return URL(fileURLWithPath: music).appendingPathComponent("Playlists")
        }
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.config"
        if let text = try? String(contentsOfFile: config + "/user-dirs.dirs", encoding: .utf8) {
            for line in text.split(separator: "\n") where line.hasPrefix("XDG_MUSIC_DIR=") {
                let value = line.dropFirst("XDG_MUSIC_DIR=".count).drop { $0 == "\"" }.reversed().drop { $0 == "\"" }.reversed()
                let path = String(value).replacing("$HOME", with: home)
                if path.hasPrefix("/") { return URL(fileURLWithPath: path).appendingPathComponent("Playlists") }
            }
        }
        return URL(fileURLWithPath: home).appendingPathComponent("Music/Playlists")
    }

    /// Lists the folders once and starts watching them; waits for it (at start, before the service
    /// answers, so that the first GetAll counts them). The saved-queues folder is created.
    public func start(onChange: @escaping @Sendable ([PlaylistEntry], [PlaylistEntry]) -> Void) -> [PlaylistEntry] {
        queue.sync {
            self.onChange = onChange
            try? FileManager.default.createDirectory(at: savedQueues, withIntermediateDirectories: true,
                                                     attributes: [.posixPermissions: 0o700])
            watch()
            reconcile()
            return list
        }
    }

    private var list: [PlaylistEntry] { entries.values.sorted { $0.id < $1.id } }

    /// Runs `body` on the catalog's queue (file-system work: reading a playlist, writing one).
    public func async(_ body: @escaping @Sendable () -> Void) { queue.async(execute: body) }

    /// Writes a saved queue as `<name>.m3u8` in the saved-queues folder (write, then rename: a
    /// reader never sees half of it) and adds it at once. Call on the catalog's queue (`async`).
    public func save(name: String, entries uris: [MediaURI]) throws(PlaylistError) -> PlaylistEntry {
        dispatchPrecondition(condition: .onQueue(queue))
        // made again if it was removed while running (its coming is then an event, as any folder's)
        try? FileManager.default.createDirectory(at: savedQueues, withIntermediateDirectories: true,
                                                 attributes: [.posixPermissions: 0o700])
        let path = savedQueues.appendingPathComponent(name + ".m3u8").path
        // RFC 8216 4.3.1.1 (EXTM3U first); #PLAYLIST: is the extended M3U name directive
        var text = "#EXTM3U\n#PLAYLIST:\(name)\n"
        for uri in uris { text += uri.string + "\n" }
        let temporary = savedQueues.appendingPathComponent(".\(name).m3u8.\(getpid()).tmp").path
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
            guard rename(temporary, path) == 0 else { throw PlaylistError(String(cString: strerror(errno))) }
        } catch {
            unlink(temporary)
            throw PlaylistError("cannot save the queue as \(path): \(error)")
        }
        let existed = entries[path] != nil
        update(path)
        savedHere.insert(path)
        // announced now, ahead of the reply that the caller queues after this returns (its
        // inotify event comes later and finds the file known and unchanged)
        let entry = entries[path]!
        onChange?(list, existed ? [entry] : [])
        return entry
    }

    // MARK: Watching

    /// What is watched in a playlist folder: files that come, are rewritten, go or are renamed, and
    /// the folder itself going.
    private static let folderMask = UInt32(IN_CREATE | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE
                                           | IN_DELETE_SELF | IN_MOVE_SELF)
    /// What is watched in the nearest existing ancestor of a folder that does not exist (yet): a
    /// directory made or moved in, and the ancestor itself going. No file's writes wake us there.
    private static let ancestorMask = UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

    private func watch() {
        inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard inotify >= 0 else {
            logger.error("cannot watch playlist folders (inotify_init1: \(String(cString: strerror(errno)))): changes are seen at the next start")
            return
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: inotify, queue: queue)
        source.setEventHandler { [weak self] in self?.readEvents() }
        source.setCancelHandler { [inotify] in close(inotify) }
        source.resume()
        self.source = source
    }

    /// The watch of each playlist folder that exists, by its path.
    private var folderWatches: [String: Int32] = [:]
    /// Every watch: what it watches.
    private var watchedPaths: [Int32: String] = [:]

    /// Watches each folder that exists, and for each that does not (yet, or any more) its nearest
    /// existing ancestor, so that its coming is an event too; then lists the folders that came
    /// (or were made anew) and forgets the files of those that went. Runs at start and when an
    /// event says a folder or an ancestor came or went: never on a timer.
    private func reconcile() {
        // a directory made between the look and the watch has no event: look again until what
        // is watched is what exists (a few rounds while `mkdir -p` runs)
        var wanted = Self.wantedWatches(directories.map(\.path))
        var watchOf = applyWatches(wanted)
        for _ in 0..<16 {
            let again = Self.wantedWatches(directories.map(\.path))
            if again == wanted { break }
            wanted = again
            watchOf = applyWatches(wanted)
        }
        for directory in directories.map(\.path) {
            // the folder's watch; -1 for a folder that exists but cannot be watched (no inotify)
            let now: Int32? = (wanted[directory] ?? 0) & Self.folderMask == Self.folderMask ? watchOf[directory] ?? -1 : nil
            let before = folderWatches[directory]
            guard now != before else { continue }
            if before != nil {
                for (path, _) in entries where Path.directory(of: path) == directory { entries[path] = nil }
            }
            folderWatches[directory] = now
            if now != nil {
                if before == nil { logger.debug("watching the playlist folder \(directory)") }
                scan(directory)
            } else if before != nil {
                logger.debug("the playlist folder \(directory) is gone; watching for it to come back")
            }
        }
    }

    /// What to watch: each folder that exists, and the nearest existing ancestor of each that does not.
    private static func wantedWatches(_ directories: [String]) -> [String: UInt32] {
        var wanted: [String: UInt32] = [:]
        for directory in directories {
            if isDirectory(directory) {
                wanted[directory, default: 0] |= folderMask
            } else if let ancestor = nearestExistingAncestor(of: directory) {
                wanted[ancestor, default: 0] |= ancestorMask
            }
        }
        return wanted
    }

    /// Sets the watches to `wanted` (each path to its mask); returns each path's watch.
    private func applyWatches(_ wanted: [String: UInt32]) -> [String: Int32] {
        var watchOf: [String: Int32] = [:]
        guard inotify >= 0 else { return watchOf }
        for (watch, path) in watchedPaths where wanted[path] == nil {
            inotify_rm_watch(inotify, watch)
            watchedPaths[watch] = nil
        }
        for (path, mask) in wanted {
            // the mask replaces the watch's own when the path already had one (no IN_MASK_ADD)
            let watch = inotify_add_watch(inotify, path, mask)
            guard watch >= 0 else {
                logger.debug("cannot watch \(path): \(String(cString: strerror(errno)))")
                continue
            }
            for (other, otherPath) in watchedPaths where otherPath == path && other != watch {
                // the path names another directory than the one watched (made anew)
                inotify_rm_watch(inotify, other)
                watchedPaths[other] = nil
            }
            watchedPaths[watch] = path
            watchOf[path] = watch
        }
        return watchOf
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    private static func nearestExistingAncestor(of path: String) -> String? {
        var cursor = path
        while cursor != "/" && !cursor.isEmpty {
            cursor = Path.directory(of: cursor)
            if isDirectory(cursor) { return cursor }
        }
        return nil
    }

    /// The 32-bit word at `offset` of an inotify event, in the machine's byte order (the kernel's).
    private static func word(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        let value = UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
        return UInt32(littleEndian: value)
    }

    /// Reads what inotify queued (struct inotify_event: wd, mask, cookie, len, then len bytes of
    /// name; inotify(7)) and updates the files it names, one stat each; an event that says a
    /// folder (or a directory on the way to one) came or went has the watches set again.
    private func readEvents() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var changed: [String] = []
        var rewritten: Set<String> = []
        var foldersMoved = false
        var overflowed = false
        while true {
            let count = Files.read(inotify, into: &buffer)
            guard count > 0 else { break }
            var offset = 0
            while offset + 16 <= count {
                let watch = Int32(bitPattern: Self.word(buffer, at: offset))
                let mask = Self.word(buffer, at: offset + 4)
                let length = Int(Self.word(buffer, at: offset + 12))
                let nameBytes = buffer[(offset + 16)..<min(offset + 16 + length, count)].prefix { $0 != 0 }
                offset += 16 + length
                if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    // events were lost: the one case where the folders are listed again
                    overflowed = true
                    continue
                }
                guard let directory = watchedPaths[watch] else { continue }
                if mask & UInt32(IN_IGNORED) != 0 {
                    // the watch is gone (its directory was deleted, or we removed it)
                    watchedPaths[watch] = nil
                    foldersMoved = true
                    continue
                }
                if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                    foldersMoved = true
                    continue
                }
                guard !nameBytes.isEmpty else { continue }
                let path = directory + "/" + String(decoding: nameBytes, as: UTF8.self)
                if mask & UInt32(IN_ISDIR) != 0 {
                    // a directory that is, or leads to, a playlist folder
                    if directories.contains(where: { $0.path == path || $0.path.hasPrefix(path + "/") }) { foldersMoved = true }
                    continue
                }
                guard folderWatches[directory] == watch else { continue }  // an ancestor's own files
                changed.append(path)
                if mask & UInt32(IN_CLOSE_WRITE | IN_MOVED_TO) != 0, entries[path] != nil {
                    // a saved queue was announced when it was written
                    if savedHere.remove(path) == nil { rewritten.insert(path) }
                }
            }
        }
        guard !changed.isEmpty || foldersMoved || overflowed else { return }
        var touched: [PlaylistEntry] = []
        for path in Set(changed) {
            update(path)
            if rewritten.contains(path), let entry = entries[path] { touched.append(entry) }
        }
        if foldersMoved || overflowed { reconcile() }
        if overflowed { scanAll() }
        onChange?(list, touched.sorted { $0.id < $1.id })
    }

    /// Adds, refreshes or drops the entry of one path, from a stat of it.
    private func update(_ path: String) {
        let name = Path.lastComponent(path)
        guard !name.hasPrefix("."), PlaylistFile.format(of: path) != nil,
              let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              attributes[.type] as? FileAttributeType == .typeRegular else {
            entries[path] = nil
            return
        }
        let modified = attributes[.modificationDate] as? Date ?? Date(timeIntervalSince1970: 0)
        // the title is read again at each event of the file (a read of its head, at most 64 KiB)
        let shown = title(of: path)
        if var entry = entries[path] {
            entry.modified = modified
            entry.name = shown
            if let born = Self.birthTime(path) { entry.created = born }
            entries[path] = entry
        } else {
            let record = records[path] ?? {
                let record = PlaylistRecord(id: nextID, path: path, firstSeen: Date())
                nextID += 1
                records[path] = record
                onRecord?(record)
                return record
            }()
            entries[path] = PlaylistEntry(id: record.id, path: path, name: shown, modified: modified,
                                          created: Self.birthTime(path) ?? record.firstSeen, lastPlayed: record.lastPlayed)
        }
    }

    /// Says that playlist `id` was activated at `date` (the `Played` ordering), and saves it.
    public func markPlayed(_ id: UInt64, at date: Date) {
        queue.async { [self] in
            guard let path = entries.first(where: { $0.value.id == id })?.key else { return }
            entries[path]?.lastPlayed = date
            if var record = records[path] {
                record.lastPlayed = date
                records[path] = record
                onRecord?(record)
            }
        }
    }

    /// The file's birth time where the file system keeps one (`Files.birthTime`).
    static func birthTime(_ path: String) -> Date? { Files.birthTime(path) }

    /// What a playlist is called: a saved queue by its file's name (the one given to SaveQueue,
    /// exactly), a file by the title it carries, else by its name without the extension.
    private func title(of path: String) -> String {
        let base = Path.nameWithoutExtension(Path.lastComponent(path))
        if Path.directory(of: path) == savedQueues.path { return base }
        return PlaylistFile.title(of: path) ?? base
    }

    /// Lists one folder, in name order.
    private func scan(_ directory: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names.sorted() { update(directory + "/" + name) }
    }

    /// Lists every watched folder again (after IN_Q_OVERFLOW), and forgets the files that are gone.
    private func scanAll() {
        var seen: Set<String> = []
        for directory in directories.map(\.path) where folderWatches[directory] != nil {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for name in names.sorted() {
                let path = directory + "/" + name
                update(path)
                if entries[path] != nil { seen.insert(path) }
            }
        }
        for path in entries.keys where !seen.contains(path) { entries[path] = nil }
    }
}
