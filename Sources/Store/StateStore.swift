import Basics
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import PlayerModel
import Playlists
import SQLite

/// One change of the saved state, as the player's events describe it. Each costs what it
/// changed: a queue edit touches the rows it names and their neighbours' links, never the whole
/// queue.
public enum StateChange: Sendable, Equatable {
    /// New entries, in order, right after `after` (nil: at the start).
    case inserted([QueueEntry], after: ItemID?)
    case removed([ItemID])
    /// An entry now right after `after` (nil: at the start).
    case moved(ItemID, after: ItemID?)
    /// The whole queue (Clear, or a full rewrite after the file was replaced), and the settings.
    case replaced([QueueEntry], SavedSettings)
    /// The player's row: current item, position, transport, settings.
    case settings(SavedSettings)
    /// Shuffle was turned on: a new play order, whose keys derive from `seed` except `keys` (the
    /// few that do not: the first item's). The keys of an earlier order go.
    case reshuffled(seed: UInt64, keys: [ItemID: UInt64])
    /// ReplayGain, the equalizer or the user's presets changed (apart from the settings row's other
    /// columns, which a checkpoint writes every few seconds while playing).
    case audio(AudioSettings)
    /// The chosen output's id, or `default` (schema 5).
    case output(String)
    /// A playlist file was given an id, or was activated (insert or update of its row).
    case playlist(PlaylistRecord)
    /// The playlist whose activation filled the queue, or none.
    case activePlaylist(ActivePlaylistRecord?)
    /// What became known of an entry's media: its tags, its length (schema 7).
    case metadata(ItemID, SavedMetadata)
    /// A long item's place kept or forgotten as it was left or played to its end (schema 9).
    case place(PlaceChange)
    /// Every place kept, oldest first, replacing those saved: with the whole state.
    case places(KeptPlaces)
}

/// A queue entry as saved: its stable id, its URI, and its key in the shuffled play order when
/// it has one of its own (an item added while shuffled).
public struct QueueEntry: Sendable, Equatable {
    public var id: ItemID
    public var uri: MediaURI
    public var shuffleKey: UInt64?
    /// Its tags and length, when known (schema 7).
    public var metadata: SavedMetadata?
    public init(id: ItemID, uri: MediaURI, shuffleKey: UInt64? = nil, metadata: SavedMetadata? = nil) {
        self.id = id
        self.uri = uri
        self.shuffleKey = shuffleKey
        self.metadata = metadata
    }
}

/// The player's state in SQLite under `$XDG_STATE_HOME/tonearm/`, so that a restart or a crash
/// finds the queue, the current item and the position where they were.
///
/// Writes happen on a serial queue of the store's own (`tonearm.state`), never on the queue that
/// answers D-Bus: `record` only appends to a list. Changes that arrive while a write runs go into
/// the next one, so a burst of them (a dragged slider) costs one transaction.
///
/// A bad database never stops the service: a corrupt file or one from a newer version is moved
/// aside and a fresh one started; a file that another tonearmd holds is left alone and the
/// service goes on without saving. A file that cannot be written (a full disk, EIO, a read-only
/// remount, its folder deleted) starts an outage: the player's state stays in memory, the file
/// is opened again at the next change and with a backoff of 1 s doubling to 60 s while the
/// state waits unsaved, and the first write that succeeds writes the whole state. Each of
/// these is said once per episode, in one log message (and once more when saving works again).
public final class StateStore: @unchecked Sendable {
    // @unchecked: `database`, `awaitingFullState`, `outage` and the fields below them are
    // confined to `queue` (init opens an existing file before it queues anything there);
    // `pending`, `drainScheduled` and `wholeStateWanted` are guarded by `lock`.
    public static let schemaVersion: Int64 = 10

    public let path: String
    private let logger: Logger
    private let queue = DispatchQueue(label: "tonearm.state", qos: .utility)
    private var database: Database?
    /// The file the open database writes (its device and inode), checked before each write: a
    /// file whose folder was deleted takes writes as ever, and they are gone at exit.
    private var openedFile: FileStatus?
    /// The file was replaced by a fresh one while running, or writes failed: changes wait for the
    /// whole state.
    private var awaitingFullState = false {
        didSet { lock.withLock { wholeStateWanted = awaitingFullState } }
    }
    /// The whole state was asked of the owner and has not come yet.
    private var wholeStateAsked = false
    /// Set while the state cannot be written: since when, the next wait, the retry's timer.
    private var outage: Outage?
    /// Every playlist record and the active playlist as last written: written again into a file
    /// that replaced a corrupt one (a few hundred rows at most).
    private var playlistRecords: [UInt64: PlaylistRecord] = [:]
    private var activePlaylist: ActivePlaylistRecord?
    private let lock = Lock()
    private var pending: [StateChange] = []
    private var drainScheduled = false
    private var wholeStateWanted = false
    /// True when the next write must be the whole state (`.replaced`): the file was replaced, or
    /// writes fail. The owner records it at quit instead of the settings alone.
    public var needsWholeState: Bool { lock.withLock { wholeStateWanted } }
    /// Called (on the store's queue) when the store needs the whole state written again: its
    /// file was corrupt and was replaced. The owner answers with `.replaced`.
    public var onNeedsFullState: (@Sendable () -> Void)?

    /// Opens (creating it when needed) the state of `instance` (nil: the default one) in
    /// `directory`, and loads what it holds. Never throws: whatever is wrong with the file is
    /// logged once and the service runs with a fresh state, saving or not. Call before the
    /// service answers anything: this reads the file and stats every saved file on the caller's thread.
    /// When there is no file yet, there is nothing to read: it is created (a directory, the schema,
    /// and the fdatasync calls of SQLite's journal and WAL) on the store's queue, before any write.
    public init(directory: URL, instance: String? = nil, logger: Logger) {
        path = directory.appendingPathComponent(instance.map { "state-\($0).sqlite" } ?? "state.sqlite").path
        self.logger = logger
        guard access(path, F_OK) == 0 || errno != ENOENT else {
            queue.async { [self] in
                if open(directory) != nil {
                    // made by another tonearmd between the check above and now: this one did not restore it
                    logger.warning("the saved state \(path) appeared while tonearmd started; it is not restored, and is overwritten")
                }
            }
            return
        }
        let contents = open(directory)
        loaded = contents?.state
        loadedPlaylists = contents?.playlists ?? []
        loadedActivePlaylist = contents?.active
        loadedPlaces = contents?.places ?? []
        for record in loadedPlaylists { playlistRecords[record.id] = record }
        activePlaylist = loadedActivePlaylist
    }

    /// What the file held when it was opened; nil for a fresh state.
    public private(set) var loaded: SavedState?
    /// The playlists the file remembers (ids, first seen, last played); empty for a fresh state.
    public private(set) var loadedPlaylists: [PlaylistRecord] = []
    /// The active playlist as saved, before anything checks that it still is.
    public private(set) var loadedActivePlaylist: ActivePlaylistRecord?
    /// The places kept for long items, oldest first (schema 9); empty for a fresh state.
    public private(set) var loadedPlaces: [(MediaURI, Duration)] = []

    /// Everything a file holds.
    private struct Contents {
        var state: SavedState
        var playlists: [PlaylistRecord]
        var active: ActivePlaylistRecord?
        /// The places kept, oldest first (schema 9).
        var places: [(MediaURI, Duration)] = []
    }

    /// The default directory: `$XDG_STATE_HOME/tonearm`, or `~/.local/state/tonearm` (XDG Base
    /// Directory Specification: "$XDG_STATE_HOME ... If ... not set or empty, $HOME/.local/state").
    public static func defaultDirectory(environment: [String: String] = Environment.variables()) -> URL {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return URL(fileURLWithPath: state).appendingPathComponent("tonearm")
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? Path.homeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".local/state/tonearm")
    }

    // MARK: Opening

    private enum OpenFailure: Error {
        case sqlite(SQLiteError)
        /// PRAGMA user_version is past what this tonearmd knows.
        case newer(Int64)
        /// The file opens but what it holds does not add up.
        case inconsistent(String)
    }

    /// Makes `directory` and opens the file in it for writing (`openForWriting`), or only reads it
    /// when the directory cannot be made.
    private func open(_ directory: URL) -> Contents? {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            return openForWriting(retry: true)
        } catch {
            logger.error("cannot save the player's state: cannot create \(directory.path) (\(Self.reason(error))); tonearmd keeps it in memory and tries again at the next change")
            beginOutage()
            return readOnly()
        }
    }

    /// Opens the file for writing and loads it; on a bad file moves it aside and starts a fresh one
    /// (once); on a file it cannot write, reads it if it can and saves nothing.
    private func openForWriting(retry: Bool) -> Contents? {
        let database: Database
        do {
            database = try Database(path: path)
        } catch {
            logger.error("cannot save the player's state: cannot open \(path) (\(error.message)); tonearmd goes on without saving it")
            return readOnly()
        }
        do {
            let saved = try prepare(database)
            self.database = database
            openedFile = Self.status(of: path)
            return saved
        } catch .sqlite(let error) where error.isBusy {
            logger.error("cannot save the player's state: another tonearmd is using \(path); this one starts empty and saves nothing (use --instance to run a second one with its own state)")
            return nil
        } catch .sqlite(let error) where error.isCorrupt {
            database.close()
            return replace(because: "it is corrupt (\(error.message))", suffix: "corrupt", retry: retry)
        } catch .inconsistent(let why) {
            database.close()
            return replace(because: "it is corrupt (\(why))", suffix: "corrupt", retry: retry)
        } catch .newer(let version) {
            database.close()
            return replace(because: "it was written by a newer tonearmd (schema version \(version); this one knows \(Self.schemaVersion))",
                           suffix: "v\(version)", retry: retry)
        } catch {
            guard case .sqlite(let error) = error else { return nil }
            database.close()
            let saved = readOnly()
            logger.error("cannot save the player's state: cannot write \(path) (\(diagnosis(error)))\(saved == nil ? "" : "; restored what it held"); tonearmd keeps it in memory and tries again at the next change")
            beginOutage()
            return saved
        }
    }

    /// Moves the bad file aside (with its WAL) and opens a fresh one.
    private func replace(because why: String, suffix: String, retry: Bool) -> Contents? {
        // 20261124T070912Z
        let stamp = Date().formatted(Date.ISO8601FormatStyle(dateSeparator: .omitted, timeSeparator: .omitted))
        let aside = "\(path).\(suffix)-\(stamp)"
        if rename(path, aside) != 0 {
            let error = String(cString: strerror(errno))
            logger.error("cannot use the saved state \(path): \(why), and it cannot be moved aside (\(error)); tonearmd starts empty and saves nothing")
            return nil
        }
        for extra in ["-wal", "-shm", "-journal"] { _ = rename(path + extra, aside + extra) }
        guard retry else {
            logger.error("cannot use the saved state \(path): \(why); moved it to \(aside); tonearmd saves nothing this time")
            return nil
        }
        logger.error("the saved state \(path) was not used: \(why); moved it to \(aside) and started a fresh state")
        return openForWriting(retry: false)
    }

    /// Reads the file without writing it (a read-only directory, a full disk): the state is
    /// restored, and nothing is saved.
    private func readOnly() -> Contents? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        if let saved = read(path, flags: [.readOnly]) { return saved }
        // a WAL-mode file in a directory where its -wal and -shm files cannot be created opens
        // only as immutable (sqlite.org/wal.html#readonly, sqlite.org/uri.html#uriimmutable)
        let escaped = Self.uriEscaped(path)
        return read("file:\(escaped)?immutable=1", flags: [.readOnly, .uri])
    }

    /// `path` for a `file:` URI: every byte but letters, digits and `/!$&'()*+,-.:=@_~` as `%XX`.
    static func uriEscaped(_ path: String) -> String {
        let kept = Set("!$&'()*+,-./:=@_~".utf8)
        var escaped = ""
        for byte in path.utf8 {
            if (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || kept.contains(byte) {
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                escaped += "%" + Digits.padded(byte, width: 2, radix: 16).uppercased()
            }
        }
        return escaped
    }

    private func read(_ path: String, flags: Database.OpenFlags) -> Contents? {
        guard let database = try? Database(path: path, flags: flags) else { return nil }
        defer { database.close() }
        // EXCLUSIVE before the first read: a WAL file is then read without the -shm file that a
        // read-only directory cannot hold (sqlite.org/wal.html#noshm)
        guard (try? database.execute("PRAGMA locking_mode=EXCLUSIVE")) != nil,
              let version = try? database.userVersion, version <= Self.schemaVersion, version > 0 else { return nil }
        return try? Self.load(database, version: version)
    }

    /// Sets the connection up, checks the file, creates the schema in a new one, takes the write
    /// lock, and loads the state.
    private func prepare(_ database: Database) throws(OpenFailure) -> Contents? {
        do {
            // one tonearmd per file: the lock taken by the first write is kept until exit, so a
            // second one finds the file busy (sqlite.org/pragma.html#pragma_locking_mode); with it
            // the WAL needs no shared memory (sqlite.org/wal.html#noshm)
            try database.execute("PRAGMA locking_mode=EXCLUSIVE")
            let version = try database.userVersion
            guard version <= Self.schemaVersion else { throw OpenFailure.newer(version) }
            // a file that is not a database fails above (SQLITE_NOTADB); damaged pages here
            let check = try database.text("PRAGMA quick_check") ?? "no answer"
            guard check == "ok" else { throw OpenFailure.inconsistent(check) }
            // WAL: a commit appends to the log and a crash never leaves half a transaction;
            // NORMAL: no fsync per commit, still consistent after a crash (sqlite.org/pragma.html#pragma_synchronous)
            guard try database.text("PRAGMA journal_mode=WAL")?.lowercased() == "wal" else {
                throw OpenFailure.sqlite(.readOnly("cannot switch to WAL"))
            }
            try database.execute("PRAGMA synchronous=NORMAL")
            // a page cache of 256 KiB, not SQLite's 2 MiB default (sqlite.org/pragma.html#pragma_cache_size):
            // the file is a few hundred KiB for a long queue and the kernel caches it anyway, while
            // the default cache fills over a long run (make fuzz's memory check)
            try database.execute("PRAGMA cache_size=-256")
            if version == 0 {
                try database.transaction { () throws(SQLiteError) in
                    try database.execute(Self.schema)
                    for migration in Self.migrations { try database.execute(migration) }
                }
                return nil
            }
            if version < Self.schemaVersion {
                // the migrations from the file's version on, in one transaction: all or none
                try database.transaction { () throws(SQLiteError) in
                    for migration in Self.migrations.dropFirst(Int(version) - 1) { try database.execute(migration) }
                }
            }
            let saved = try Self.load(database, version: Self.schemaVersion)
            // take the write lock now, before the service answers (see locking_mode above)
            try database.transaction { () throws(SQLiteError) in try database.execute("UPDATE player SET one = 1") }
            return saved
        } catch let error as SQLiteError {
            throw .sqlite(error)
        } catch let error as OpenFailure {
            throw error
        } catch {
            throw .inconsistent("\(error)")
        }
    }

    // Schema 1. The order is a list linked through `next` (NULL: the last), its first entry in
    // `player.head`: an edit changes the rows it adds, removes or moves and its neighbours' links.
    static let schema = """
        CREATE TABLE item (id INTEGER PRIMARY KEY, uri TEXT NOT NULL, next INTEGER);
        CREATE INDEX item_by_next ON item(next);
        CREATE TABLE player (
            one INTEGER PRIMARY KEY CHECK (one = 1),
            head INTEGER, next_id INTEGER NOT NULL,
            current INTEGER, position_us INTEGER NOT NULL, duration_us INTEGER,
            intent TEXT NOT NULL, volume REAL NOT NULL, muted INTEGER NOT NULL,
            loop TEXT NOT NULL, shuffle INTEGER NOT NULL, rate REAL NOT NULL);
        INSERT INTO player (one, next_id, position_us, intent, volume, muted, loop, shuffle, rate)
            VALUES (1, 1, 0, 'stopped', 1.0, 0, 'none', 0, 1.0);
        PRAGMA user_version = 1;
        """

    /// The changes from each version to the next: `migrations[0]` takes 1 to 2. A new file gets
    /// `schema` and then all of them.
    ///
    /// Schema 2: the shuffled play order (issue 14): each item's key where it has one of its own
    /// (`item.shuffle_key`; an item added while shuffled), and the seed the others' keys derive
    /// from (`player.shuffle_seed`), so that turning shuffle on writes one row, and Next none of
    /// the order. The playlists: the id each file was given, when it was first seen and last
    /// activated (`playlist`), and the active playlist with the ids its activation gave
    /// (`player.active_*`). 64-bit keys and seeds are stored as their signed bit pattern.
    static let migrations = [
        """
        ALTER TABLE item ADD COLUMN shuffle_key INTEGER;
        ALTER TABLE player ADD COLUMN shuffle_seed INTEGER;
        ALTER TABLE player ADD COLUMN active_playlist INTEGER;
        ALTER TABLE player ADD COLUMN active_first INTEGER;
        ALTER TABLE player ADD COLUMN active_last INTEGER;
        CREATE TABLE playlist (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE,
            first_seen_ms INTEGER NOT NULL, last_played_ms INTEGER);
        PRAGMA user_version = 2;
        """,
        // Schema 3: the video window's settings: gravity, picture-in-picture, the bar (issue 28).
        """
        ALTER TABLE player ADD COLUMN video_gravity TEXT NOT NULL DEFAULT 'fit';
        ALTER TABLE player ADD COLUMN picture_in_picture INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE player ADD COLUMN controls_visible INTEGER NOT NULL DEFAULT 1;
        PRAGMA user_version = 3;
        """,
        // Schema 4: ReplayGain, the equalizer and the user's presets (issue 29). The gains are
        // text, ten numbers joined by commas.
        """
        ALTER TABLE player ADD COLUMN replaygain_mode TEXT NOT NULL DEFAULT 'off';
        ALTER TABLE player ADD COLUMN replaygain_preamp REAL NOT NULL DEFAULT 0;
        ALTER TABLE player ADD COLUMN equalizer TEXT NOT NULL DEFAULT '';
        ALTER TABLE player ADD COLUMN equalizer_preset TEXT NOT NULL DEFAULT 'flat';
        CREATE TABLE equalizer_preset (position INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, gains TEXT NOT NULL);
        PRAGMA user_version = 4;
        """,
        // Schema 5: the chosen output, by the device's id (issue 29).
        """
        ALTER TABLE player ADD COLUMN output TEXT NOT NULL DEFAULT 'default';
        PRAGMA user_version = 5;
        """,
        // Schema 6: the crossfade (issue 29), in milliseconds, and whether albums crossfade too.
        """
        ALTER TABLE player ADD COLUMN crossfade_ms INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE player ADD COLUMN crossfade_albums INTEGER NOT NULL DEFAULT 0;
        PRAGMA user_version = 6;
        """,
        // Schema 7: each entry's tags and length once read (issue 30), so that a restart shows
        // them without GStreamer; the tags as one text (`TagsText`), on the entry's own row.
        """
        ALTER TABLE item ADD COLUMN duration_us INTEGER;
        ALTER TABLE item ADD COLUMN tags TEXT;
        PRAGMA user_version = 7;
        """,
        // Schema 8: linear playback (issue 40).
        """
        ALTER TABLE player ADD COLUMN linear_playback INTEGER NOT NULL DEFAULT 0;
        PRAGMA user_version = 8;
        """,
        // Schema 9: a place kept per long item, by URI (issue 40; `KeptPlaces.swift`), and the
        // setting that turns it off. `used` orders them (larger: kept later); past
        // `KeptPlaces.capacity` the smallest go.
        """
        ALTER TABLE player ADD COLUMN resume_places INTEGER NOT NULL DEFAULT 1;
        CREATE TABLE place (uri TEXT PRIMARY KEY, position_us INTEGER NOT NULL, used INTEGER NOT NULL);
        CREATE INDEX place_by_used ON place(used);
        PRAGMA user_version = 9;
        """,
        // Schema 10: Next and Previous by chapter (issue 40; `Chapters.swift`).
        """
        ALTER TABLE player ADD COLUMN next_by_chapter INTEGER NOT NULL DEFAULT 0;
        PRAGMA user_version = 10;
        """,
    ]

    /// ReplayGain, the equalizer and the user's presets (schema 4); what does not parse is left
    /// at its default (the machine checks the rest when it restores them).
    private static func loadAudio(_ database: Database) throws -> AudioSettings {
        var audio = AudioSettings()
        let row = try database.prepare("SELECT replaygain_mode, replaygain_preamp, equalizer, equalizer_preset FROM player WHERE one = 1")
        if try row.step() {
            audio.replayGain = row.string(0).flatMap(ReplayGainMode.init(rawValue:)) ?? .off
            audio.preamp = row.double(1)
            audio.equalizer = gains(row.string(2)) ?? Equalizer.flat
            audio.equalizerPreset = row.string(3) ?? ""
        }
        let presets = try database.prepare("SELECT name, gains FROM equalizer_preset ORDER BY position")
        while try presets.step() {
            guard let name = presets.string(0), let gains = gains(presets.string(1)) else { continue }
            audio.userPresets.append(EqualizerPreset(name: name, gains: gains))
        }
        return audio
    }

    /// The crossfade (schema 6); the machine checks its range when it restores it.
    private static func loadCrossfade(_ database: Database, into audio: inout AudioSettings) throws {
        let row = try database.prepare("SELECT crossfade_ms, crossfade_albums FROM player WHERE one = 1")
        guard try row.step() else { return }
        audio.crossfade = .milliseconds(row.int64(0))
        audio.crossfadeAlbums = row.int64(1) != 0
    }

    /// Gains saved as text ("0,-3.5,..."); nil unless there are ten numbers.
    private static func gains(_ text: String?) -> [Double]? {
        let gains = (text ?? "").split(separator: ",").compactMap { Double($0) }
        return gains.count == Equalizer.bandCount ? gains : nil
    }

    private static func load(_ database: Database, version: Int64) throws -> Contents {
        let two = version >= 2, three = version >= 3
        let row = try database.prepare("""
            SELECT head, next_id, current, position_us, duration_us, intent, volume, muted, loop, shuffle, rate
                \(two ? ", shuffle_seed, active_playlist, active_first, active_last" : "")
                \(three ? ", video_gravity, picture_in_picture, controls_visible" : "")
            FROM player WHERE one = 1
            """)
        guard try row.step() else { throw OpenFailure.inconsistent("no player row") }
        var settings = SavedSettings()
        let head = row.isNull(0) ? nil : row.int64(0)
        let nextID = UInt64(clamping: row.int64(1))
        settings.currentID = row.isNull(2) ? nil : ItemID(UInt64(clamping: row.int64(2)))
        settings.position = .microseconds(max(row.int64(3), 0))
        settings.currentDuration = row.isNull(4) ? nil : .microseconds(max(row.int64(4), 0))
        settings.intent = row.string(5).flatMap(TransportIntent.init(rawValue:)) ?? .stopped
        settings.volume = min(max(row.double(6), 0), 1)
        settings.isMuted = row.int64(7) != 0
        settings.loopMode = row.string(8).flatMap(LoopMode.init(rawValue:)) ?? .none
        settings.isShuffled = row.int64(9) != 0
        settings.rate = row.double(10)
        var active: ActivePlaylistRecord?
        if two {
            settings.shuffleSeed = row.isNull(11) ? nil : UInt64(bitPattern: row.int64(11))
            if !row.isNull(12), !row.isNull(13), !row.isNull(14), row.int64(13) <= row.int64(14) {
                active = ActivePlaylistRecord(playlist: UInt64(bitPattern: row.int64(12)),
                                              items: UInt64(bitPattern: row.int64(13))...UInt64(bitPattern: row.int64(14)))
            }
        }
        if three {
            settings.video = VideoSettings(gravity: row.string(15).flatMap(VideoGravity.init(rawValue:)) ?? .fit,
                                           pictureInPicture: row.int64(16) != 0, controlsVisible: row.int64(17) != 0)
        }

        if version >= 4 { settings.audio = try loadAudio(database) }
        if version >= 5 {
            let output = try database.prepare("SELECT output FROM player WHERE one = 1")
            if try output.step(), let id = output.string(0) { settings.output = id }
        }
        if version >= 6 { try loadCrossfade(database, into: &settings.audio) }
        if version >= 8 {
            let linear = try database.prepare("SELECT linear_playback FROM player WHERE one = 1")
            if try linear.step() { settings.linearPlayback = linear.int64(0) != 0 }
        }
        if version >= 10 {
            let byChapter = try database.prepare("SELECT next_by_chapter FROM player WHERE one = 1")
            if try byChapter.step() { settings.nextByChapter = byChapter.int64(0) != 0 }
        }
        var places: [(MediaURI, Duration)] = []
        if version >= 9 {
            let resume = try database.prepare("SELECT resume_places FROM player WHERE one = 1")
            if try resume.step() { settings.resumePlaces = resume.int64(0) != 0 }
            let rows = try database.prepare("SELECT uri, position_us FROM place ORDER BY used")
            while try rows.step() {
                // a row that does not make sense is left out, not a reason to drop the queue
                guard let text = rows.string(0), let uri = try? MediaURI(text, relativeTo: "/"), rows.int64(1) > 0 else { continue }
                places.append((uri, .microseconds(rows.int64(1))))
            }
        }

        var rows: [Int64: (uri: String, next: Int64?, key: UInt64?, metadata: SavedMetadata?)] = [:]
        let seven = version >= 7
        var shared = TagsText.Shared()
        let items = try database.prepare("SELECT id, uri, next\(two ? ", shuffle_key" : "")\(seven ? ", duration_us, tags" : "") FROM item")
        while try items.step() {
            rows[items.int64(0)] = (items.string(1) ?? "", items.isNull(2) ? nil : items.int64(2),
                                    two && !items.isNull(3) ? UInt64(bitPattern: items.int64(3)) : nil,
                                    seven ? Self.metadata(duration: items.isNull(4) ? nil : items.int64(4), tags: items.string(5), sharing: &shared) : nil)
        }
        var entries: [SavedState.Entry] = []
        entries.reserveCapacity(rows.count)
        var cursor = head
        while let id = cursor {
            guard let row = rows[id], entries.count < rows.count else {
                throw OpenFailure.inconsistent("the queue's order is broken at entry \(id)")
            }
            guard id > 0, let uri = try? MediaURI(row.uri, relativeTo: "/") else {
                throw OpenFailure.inconsistent("entry \(id) has no valid URI")
            }
            entries.append(SavedState.Entry(id: ItemID(UInt64(id)), uri: uri, fileIsMissing: Self.isMissing(uri), shuffleKey: row.key,
                                            metadata: row.metadata))
            cursor = row.next
        }
        guard entries.count == rows.count else {
            throw OpenFailure.inconsistent("\(rows.count - entries.count) entries are not in the queue's order")
        }
        var playlists: [PlaylistRecord] = []
        if two {
            let list = try database.prepare("SELECT id, path, first_seen_ms, last_played_ms FROM playlist ORDER BY id")
            while try list.step() {
                guard list.int64(0) > 0, let path = list.string(1) else { continue }
                playlists.append(PlaylistRecord(id: UInt64(list.int64(0)), path: path, firstSeen: Self.date(list.int64(2)),
                                                lastPlayed: list.isNull(3) ? nil : Self.date(list.int64(3))))
            }
        }
        return Contents(state: SavedState(items: entries, settings: settings, nextID: nextID), playlists: playlists, active: active,
                        places: places)
    }

    /// An entry's saved tags and length (schema 7); nil when neither was saved.
    private static func metadata(duration: Int64?, tags: String?, sharing shared: inout TagsText.Shared) -> SavedMetadata? {
        guard duration != nil || tags != nil else { return nil }
        return SavedMetadata(tags: tags.map { TagsText.tags($0, sharing: &shared) } ?? Metadata(),
                             duration: duration.map { .microseconds(max($0, 0)) })
    }

    private static func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
    fileprivate static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        return value.isFinite ? Int64(max(min(value, 9e15), -9e15)) : 0
    }

    /// A local file that no longer exists (stat says ENOENT or ENOTDIR); anything else is left
    /// for the engine to find when it loads the item.
    /// What stat(2) says of the file at `path` now (kind, device, inode); nil when it is gone.
    private static func status(of path: String) -> FileStatus? {
        try? Files.status(Array(path.utf8)).get()
    }

    private static func isMissing(_ uri: MediaURI) -> Bool {
        guard let bytes = uri.pathBytes, case .failure(let error) = Files.status(bytes) else { return false }
        return error.isNoSuchFile
    }

    /// Why a write failed, in words a person can act on: SQLite says "disk I/O error" for a full
    /// disk and for a read-only directory alike, so the directory, the file, the free space and
    /// the file-size limit are looked at.
    private func diagnosis(_ error: SQLiteError) -> String {
        let directory = Path.directory(of: path)
        if access(directory, W_OK) != 0 {
            return "\(directory) is not writable: \(String(cString: strerror(errno)))"
        }
        if access(path, F_OK) == 0, access(path, W_OK) != 0 {
            return "\(path) is not writable: \(String(cString: strerror(errno)))"
        }
        var disk = statvfs()
        if statvfs(directory, &disk) == 0, disk.f_bavail == 0 {
            return "the disk is full"
        }
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max {
            return "the file-size limit (ulimit -f) of \(limit.rlim_cur) bytes was reached, as on a full disk (\(error.message))"
        }
        return error.message
    }

    private static func reason(_ error: any Error) -> String {
        SystemError.reason(error)
    }

    // MARK: Writing

    /// Queues a change for the next write; returns at once (any thread).
    public func record(_ change: StateChange) {
        lock.lock()
        if case .settings = change, case .settings = pending.last {
            pending[pending.count - 1] = change  // only the newest row matters
        } else if case .metadata(let id, _) = change, case .metadata(id, _) = pending.last {
            pending[pending.count - 1] = change  // a load's tags come in a few messages
        } else if case .place(let place) = change, case .place(let last) = pending.last, last.uri == place.uri {
            pending[pending.count - 1] = change
        } else {
            pending.append(change)
        }
        let schedule = !drainScheduled
        drainScheduled = true
        lock.unlock()
        if schedule { queue.async { self.drain() } }
    }

    /// How many rows the last write inserted, updated or deleted (after `flush`): what an edit costs.
    public var rowsWrittenByLastWrite: Int64 { queue.sync { rowsInLastWrite } }
    private var rowsInLastWrite: Int64 = 0

    /// Writes what is queued and waits for it: at quit.
    public func flush() {
        queue.sync { drain(finalWrite: true) }
    }

    /// Closes the file (after `flush`): the lock on it goes, and the WAL is folded into it.
    public func close() {
        queue.sync {
            outage?.timer?.cancel()
            outage = nil
            database?.close()
            database = nil
        }
    }

    private func drain(finalWrite: Bool = false) {
        dispatchPrecondition(condition: .onQueue(queue))
        lock.lock()
        var changes = pending
        pending.removeAll(keepingCapacity: true)
        drainScheduled = false
        lock.unlock()
        guard !changes.isEmpty else { return }
        for change in changes {
            switch change {
            case .playlist(let record): playlistRecords[record.id] = record
            case .activePlaylist(let active): activePlaylist = active
            default: break
            }
        }
        if database == nil {
            // never saving (another tonearmd holds the file), or an outage: a change is when to
            // try again, at most once a second (a dragged slider sends dozens) but always at quit;
            // what comes until the file opens is dropped, since the whole state follows
            guard outage != nil else { return }
            guard finalWrite || retryAllowed() else {
                scheduleRetry(soon: true)
                return
            }
            guard reopen() else {
                scheduleRetry(soon: false)
                return
            }
        }
        guard let database else { return }
        if awaitingFullState {
            // after the file was replaced or writes failed, nothing of the queue before the whole
            // state can apply; the playlists' rows are written whole with it
            guard let full = changes.lastIndex(where: \.isWholeState) else {
                askForWholeState()
                return
            }
            changes = Array(changes[full...]).filter { !$0.isPlaylistChange }
            changes += playlistRecords.values.sorted { $0.id < $1.id }.map { .playlist($0) }
            changes.append(.activePlaylist(activePlaylist))
        }
        guard openedFile != nil, Self.status(of: path) == openedFile else {
            // the folder or the file was deleted (or replaced) under the open database: writes
            // would go to a file with no name, lost at exit
            fail("\(path) was deleted or replaced while tonearmd ran")
            return
        }
        do {
            let before = database.totalChanges
            try database.transaction { () throws(SQLiteError) in
                let writer = Writer(database)
                for change in changes { try writer.apply(change) }
            }
            rowsInLastWrite = database.totalChanges - before
            awaitingFullState = false
            wholeStateAsked = false
            // what tests that kill tonearmd wait for (--log-level debug)
            logger.debug("saved the state: \(changes.count) change(s), \(rowsInLastWrite) row(s)")
            endOutage()
        } catch let error where error.isCorrupt {
            database.close()
            self.database = nil
            _ = replace(because: "it became corrupt while running (\(error.message))", suffix: "corrupt", retry: true)
            if self.database != nil {
                awaitingFullState = true
                askForWholeState()
            }
        } catch let error where error.isConstraint || error.code == Writer.inconsistent {
            // the file and the player disagree (an edit of an entry the file lacks): write it all
            logger.warning("the saved state disagreed with the player (\(error.message)); writing it whole")
            awaitingFullState = true
            wholeStateAsked = false
            askForWholeState()
        } catch {
            // the transaction was rolled back: the file holds the state before it
            fail(diagnosis(error))
        }
    }

    // MARK: Outages

    /// A time when the state could not be written, and how it is tried again.
    private struct Outage {
        var since = ContinuousClock.now
        /// The last attempt to open the file again.
        var lastAttempt = ContinuousClock.now
        /// How long the retry timer waits after the next failed attempt: 1 s doubling to 60 s.
        var backoff: Duration = .seconds(1)
        /// The retry, while the state waits unsaved; nil otherwise (nothing ticks when nothing waits).
        var timer: (any DispatchSourceTimer)?
        /// When `timer` fires.
        var nextRetry = ContinuousClock.now
    }

    /// The first attempt after a failure waits this long; after that each waits twice as long, up to `longestRetry`.
    static let firstRetry: Duration = .seconds(1)
    static let longestRetry: Duration = .seconds(60)

    /// A write failed: the database is closed, the state waits in memory for the file to open
    /// again, and the first failure of an episode is logged.
    private func fail(_ why: String) {
        database?.close()
        database = nil
        openedFile = nil
        if outage == nil {
            logger.error("cannot save the player's state: writing \(path) failed (\(why)); tonearmd keeps it in memory and tries again at the next change, and every minute at most while it waits")
        } else {
            logger.debug("saving the state failed again: \(why)")
        }
        beginOutage()
        scheduleRetry(soon: false)
    }

    private func beginOutage() {
        if outage == nil { outage = Outage() }
        awaitingFullState = true
        wholeStateAsked = false
    }

    private func retryAllowed() -> Bool {
        guard let outage else { return true }
        return ContinuousClock.now - outage.lastAttempt >= Self.firstRetry
    }

    /// Opens the file again after an outage (making its folder when it is gone): true when it
    /// can be written. Quiet: the episode's failure was said once.
    private func reopen() -> Bool {
        outage?.lastAttempt = .now
        do {
            try FileManager.default.createDirectory(at: URL(fileURLWithPath: Path.directory(of: path)), withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            return false
        }
        guard let database = try? Database(path: path) else { return false }
        do {
            _ = try prepare(database)
            self.database = database
            openedFile = Self.status(of: path)
        } catch .sqlite(let error) where error.isCorrupt {
            database.close()
            _ = replace(because: "it is corrupt (\(error.message))", suffix: "corrupt", retry: true)
            guard self.database != nil else { return false }
        } catch {
            database.close()
            return false
        }
        // the file holds what was saved before the outage: the whole state comes next
        awaitingFullState = true
        return true
    }

    /// Asks the owner for the whole state, once until it comes.
    private func askForWholeState() {
        guard !wholeStateAsked else { return }
        wholeStateAsked = true
        onNeedsFullState?()
    }

    /// Arms the retry: `soon` (a change waits) within a second of the last attempt, else after
    /// the backoff, which then doubles.
    private func scheduleRetry(soon: Bool) {
        guard var outage else { return }
        let now = ContinuousClock.now
        let delay: Duration
        if soon {
            delay = max(.zero, Self.firstRetry - (now - outage.lastAttempt))
            if outage.timer != nil, outage.nextRetry <= now + delay { return }  // armed sooner already
        } else {
            delay = outage.backoff
            outage.backoff = min(outage.backoff * 2, Self.longestRetry)
        }
        let timer = outage.timer ?? {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [weak self] in self?.retry() }
            timer.resume()
            return timer
        }()
        timer.schedule(deadline: .now() + .nanoseconds(Int(delay.nanoseconds)), leeway: .milliseconds(100))
        outage.timer = timer
        outage.nextRetry = now + delay
        self.outage = outage
    }

    /// The retry timer fired: open the file again, and write the whole state when it opens.
    private func retry() {
        guard outage != nil, database == nil else { return }
        if reopen() { askForWholeState() } else { scheduleRetry(soon: false) }
    }

    /// A write succeeded: an outage, if any, ends (said once) and its timer goes.
    private func endOutage() {
        guard let outage else { return }
        outage.timer?.cancel()
        self.outage = nil
        let seconds = (ContinuousClock.now - outage.since).components.seconds
        logger.notice("saving the player's state again in \(path) (after \(seconds) s in which it could not be saved)")
    }

    /// The statements of one write.
    private struct Writer {
        /// Our own code for "the file lacks a row the change needs" (not an SQLite code).
        static let inconsistent: Int32 = -1
        let database: Database
        init(_ database: Database) { self.database = database }

        func apply(_ change: StateChange) throws(SQLiteError) {
            switch change {
            case .inserted(let entries, let after):
                guard let first = entries.first else { return }
                let following: Int64?
                if let after {
                    guard let next = try next(of: after) else { throw missing(after) }
                    following = next
                } else {
                    following = try head()
                }
                try insertChain(entries, endingBefore: following)
                if let after {
                    try database.cached("UPDATE item SET next = ? WHERE id = ?").run(.integer(raw(first.id)), .integer(raw(after)))
                } else {
                    try setHead(raw(first.id))
                }
            case .removed(let ids):
                let delete = try database.cached("DELETE FROM item WHERE id = ?")
                for id in ids {
                    guard try unlink(id) else { continue }
                    try delete.run(.integer(raw(id)))
                }
            case .moved(let id, let after):
                guard try unlink(id) else { throw missing(id) }
                let following: Int64?
                if let after {
                    guard let next = try next(of: after) else { throw missing(after) }
                    following = next
                    try database.cached("UPDATE item SET next = ? WHERE id = ?").run(.integer(raw(id)), .integer(raw(after)))
                } else {
                    following = try head()
                    try setHead(raw(id))
                }
                try database.cached("UPDATE item SET next = ? WHERE id = ?").run(.optional(following), .integer(raw(id)))
            case .replaced(let entries, let settings):
                try database.execute("DELETE FROM item")
                try insertChain(entries, endingBefore: nil)
                try setHead(entries.first.map { raw($0.id) })
                try write(settings)
                try write(settings.audio)
                try writeOutput(settings.output)
            case .settings(let settings):
                try write(settings)
            case .audio(let audio):
                try write(audio)
            case .output(let id):
                try writeOutput(id)
            case .reshuffled(let seed, let keys):
                // only the rows that had a key of their own, and those that get one: not the queue
                try database.execute("UPDATE item SET shuffle_key = NULL WHERE shuffle_key IS NOT NULL")
                try database.cached("UPDATE player SET shuffle_seed = ? WHERE one = 1").run(.integer(Int64(bitPattern: seed)))
                let update = try database.cached("UPDATE item SET shuffle_key = ? WHERE id = ?")
                for (id, key) in keys { try update.run(.integer(Int64(bitPattern: key)), .integer(raw(id))) }
            case .playlist(let record):
                try database.cached("""
                    INSERT INTO playlist (id, path, first_seen_ms, last_played_ms) VALUES (?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET path = excluded.path, last_played_ms = excluded.last_played_ms
                    """).run(.integer(Int64(bitPattern: record.id)), .text(record.path), .integer(StateStore.milliseconds(record.firstSeen)),
                             .optional(record.lastPlayed.map(StateStore.milliseconds)))
            case .activePlaylist(let active):
                try database.cached("UPDATE player SET active_playlist = ?, active_first = ?, active_last = ? WHERE one = 1").run(
                    .optional(active.map { Int64(bitPattern: $0.playlist) }),
                    .optional(active.map { Int64(bitPattern: $0.items.lowerBound) }),
                    .optional(active.map { Int64(bitPattern: $0.items.upperBound) }))
            case .metadata(let id, let metadata):
                // an entry removed meanwhile has no row: nothing to write, and nothing wrong
                try database.cached("UPDATE item SET duration_us = ?, tags = ? WHERE id = ?")
                    .run(.optional(metadata.duration?.microseconds), .optional(TagsText.text(metadata.tags)), .integer(raw(id)))
            case .place(let change):
                try write(change)
            case .places(let places):
                try database.execute("DELETE FROM place")
                let insert = try database.cached("INSERT INTO place (uri, position_us, used) VALUES (?, ?, ?)")
                for (index, place) in places.all.enumerated() {
                    try insert.run(.text(place.uri.string), .integer(place.position.microseconds), .integer(Int64(index + 1)))
                }
            }
        }

        /// One place kept (the most recently used) or forgotten; past `KeptPlaces.capacity` the
        /// least recently used go (an index walk of that many entries).
        private func write(_ change: PlaceChange) throws(SQLiteError) {
            guard let position = change.position else {
                try database.cached("DELETE FROM place WHERE uri = ?").run(.text(change.uri.string))
                return
            }
            try database.cached("""
                INSERT INTO place (uri, position_us, used) VALUES (?, ?, (SELECT coalesce(max(used), 0) + 1 FROM place))
                ON CONFLICT (uri) DO UPDATE SET position_us = excluded.position_us, used = excluded.used
                """).run(.text(change.uri.string), .integer(max(position.microseconds, 1)))
            try database.cached("""
                DELETE FROM place WHERE used <= (SELECT used FROM place ORDER BY used DESC LIMIT 1 OFFSET ?)
                """).run(.integer(Int64(KeptPlaces.capacity)))
        }

        private func raw(_ id: ItemID) -> Int64 { Int64(bitPattern: id.rawValue) }

        private func missing(_ id: ItemID) -> SQLiteError {
            SQLiteError(code: Self.inconsistent, message: "no entry \(id.rawValue) in the saved queue")
        }

        private func head() throws(SQLiteError) -> Int64? {
            let statement = try database.cached("SELECT head FROM player WHERE one = 1")
            defer { statement.reset() }
            guard try statement.step() else { return nil }
            return statement.isNull(0) ? nil : statement.int64(0)
        }

        private func setHead(_ id: Int64?) throws(SQLiteError) {
            try database.cached("UPDATE player SET head = ? WHERE one = 1").run(.optional(id))
        }

        /// The entry after `id` (its value nil: the last); nil when `id` is not saved.
        private func next(of id: ItemID) throws(SQLiteError) -> Int64?? {
            let statement = try database.cached("SELECT next FROM item WHERE id = ?").bind(.integer(raw(id)))
            defer { statement.reset() }
            guard try statement.step() else { return nil }
            return .some(statement.isNull(0) ? nil : statement.int64(0))
        }

        /// Takes `id` out of the order (its row stays); false when it is not saved.
        private func unlink(_ id: ItemID) throws(SQLiteError) -> Bool {
            guard let next = try next(of: id) else { return false }
            try database.cached("UPDATE item SET next = ? WHERE next = ?").run(.optional(next), .integer(raw(id)))
            try database.cached("UPDATE player SET head = ? WHERE one = 1 AND head = ?").run(.optional(next), .integer(raw(id)))
            return true
        }

        /// Inserts `entries` linked in order, the last one pointing at `following`.
        private func insertChain(_ entries: [QueueEntry], endingBefore following: Int64?) throws(SQLiteError) {
            let insert = try database.cached("INSERT INTO item (id, uri, next, shuffle_key, duration_us, tags) VALUES (?, ?, ?, ?, ?, ?)")
            var largest: Int64 = 0
            for (index, entry) in entries.enumerated() {
                let next = index + 1 < entries.count ? raw(entries[index + 1].id) : following
                try insert.run(.integer(raw(entry.id)), .text(entry.uri.string), .optional(next),
                               .optional(entry.shuffleKey.map { Int64(bitPattern: $0) }),
                               .optional(entry.metadata?.duration?.microseconds), .optional(entry.metadata.flatMap { TagsText.text($0.tags) }))
                largest = max(largest, raw(entry.id))
            }
            try database.cached("UPDATE player SET next_id = max(next_id, ?) WHERE one = 1").run(.integer(largest &+ 1))
        }

        private func writeOutput(_ id: String) throws(SQLiteError) {
            try database.cached("UPDATE player SET output = ? WHERE one = 1").run(.text(id))
        }

        private func write(_ audio: AudioSettings) throws(SQLiteError) {
            func text(_ gains: [Double]) -> String { gains.map { "\($0)" }.joined(separator: ",") }
            try database.cached("""
                UPDATE player SET replaygain_mode = ?, replaygain_preamp = ?, equalizer = ?, equalizer_preset = ? WHERE one = 1
                """).run(.text(audio.replayGain.rawValue), .real(audio.preamp), .text(text(audio.equalizer)),
                         .text(audio.equalizerPreset))
            try database.execute("DELETE FROM equalizer_preset")
            let insert = try database.cached("INSERT INTO equalizer_preset (position, name, gains) VALUES (?, ?, ?)")
            for (position, preset) in audio.userPresets.enumerated() {
                try insert.run(.integer(Int64(position)), .text(preset.name), .text(text(preset.gains)))
            }
            let (seconds, attoseconds) = audio.crossfade.components
            try database.cached("UPDATE player SET crossfade_ms = ?, crossfade_albums = ? WHERE one = 1")
                .run(.integer(seconds * 1000 + attoseconds / 1_000_000_000_000_000), .integer(audio.crossfadeAlbums ? 1 : 0))
        }

        private func write(_ settings: SavedSettings) throws(SQLiteError) {
            try database.cached("""
                UPDATE player SET current = ?, position_us = ?, duration_us = ?, intent = ?, volume = ?, muted = ?,
                    loop = ?, shuffle = ?, rate = ?, shuffle_seed = ?, video_gravity = ?, picture_in_picture = ?, controls_visible = ?,
                    linear_playback = ?, resume_places = ?, next_by_chapter = ? WHERE one = 1
                """).run(
                    .optional(settings.currentID.map(raw)), .integer(max(settings.position.microseconds, 0)),
                    .optional(settings.currentDuration?.microseconds), .text(settings.intent.rawValue),
                    .real(settings.volume), .integer(settings.isMuted ? 1 : 0), .text(settings.loopMode.rawValue),
                    .integer(settings.isShuffled ? 1 : 0), .real(settings.rate),
                    .optional(settings.shuffleSeed.map { Int64(bitPattern: $0) }),
                    .text(settings.video.gravity.rawValue), .integer(settings.video.pictureInPicture ? 1 : 0),
                    .integer(settings.video.controlsVisible ? 1 : 0), .integer(settings.linearPlayback ? 1 : 0),
                    .integer(settings.resumePlaces ? 1 : 0), .integer(settings.nextByChapter ? 1 : 0))
            // the current item's place goes with its position: on the same occasions (issue 40)
            if let place = settings.currentPlace { try write(place) }
        }
    }
}


extension StateChange {
    /// The whole queue and the settings: what a fresh or reopened file needs first.
    var isWholeState: Bool {
        if case .replaced = self { true } else { false }
    }

    /// A change of the playlists' rows, not of the queue: written into a fresh file with the whole state.
    var isPlaylistChange: Bool {
        switch self {
        case .playlist, .activePlaylist: true
        default: false
        }
    }
}
