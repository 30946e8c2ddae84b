import DBus

/// One chapter of the current track, from the extension's `Chapters` (`a(xxs)`).
public struct ChapterEntry: Sendable, Equatable {
    /// 0-based, as D-Bus counts (`GoToChapter`, `CurrentChapter`); people see `index + 1`.
    public var index: Int
    public var start: Duration
    /// nil while the track's length, and so the last chapter's end, is unknown (-1 on the bus).
    public var end: Duration?
    /// "" when the file gives none.
    public var title: String
}

/// The current chapter as `status` shows it: `chapter 2/5: Title`.
public struct ChapterStatus: Sendable, Equatable {
    /// 1-based, as people count.
    public var number: Int
    public var count: Int
    public var title: String

    /// nil when the track has no chapters, or the position is before the first (`CurrentChapter` -1),
    /// or the service has no chapters at all (one from before them).
    init?(_ properties: [String: DBusValue]) {
        let chapters = ChapterEntry.list(properties["Chapters"])
        guard let current = properties["CurrentChapter"]?.int32Value, chapters.indices.contains(Int(current)) else { return nil }
        (number, count, title) = (Int(current) + 1, chapters.count, chapters[Int(current)].title)
    }
}

extension ChapterEntry {
    /// The entries of a `Chapters` value; what is not `(xxs)` is left out.
    static func list(_ value: DBusValue?) -> [ChapterEntry] {
        (value?.arrayValue ?? []).enumerated().compactMap { index, row in
            guard let fields = row.structureValue, fields.count == 3, let start = fields[0].int64Value,
                  let end = fields[1].int64Value, let title = fields[2].stringValue else { return nil }
            return ChapterEntry(index: index, start: .microseconds(start), end: end < 0 ? nil : .microseconds(end), title: title)
        }
    }
}

/// Chapters of the current track (docs/dbus.md, "Chapters"): the extension's `Chapters`,
/// `CurrentChapter` and `GoToChapter`. Indexes here are 0-based, as on the bus.
extension TonearmClient {
    /// How far into a chapter `previousChapter` goes back to its start rather than to the chapter
    /// before, as `Previous` does for tracks.
    public static let previousRestartsAfter = Duration.seconds(3)

    /// The current track's chapters in order; empty when it has none or nothing is current.
    public func chapters() throws -> [ChapterEntry] {
        ChapterEntry.list(try property(Self.extensionInterface, "Chapters"))
    }

    /// The index of the chapter the position is in; nil with no chapters or before the first.
    public func currentChapter() throws -> Int? {
        guard let index = try property(Self.extensionInterface, "CurrentChapter").int32Value else {
            throw ClientError(.unexpectedReply, "CurrentChapter is not an int32")
        }
        return index < 0 ? nil : Int(index)
    }

    /// `GoToChapter(index)`: an exact seek to the chapter's start. The service refuses an index
    /// the track does not have (`io.github.tonearm.Error.NoSuchChapter`) and while linear playback
    /// is on.
    public func goToChapter(_ index: Int) throws {
        // clamped: any Int32 is checked by the service, one past it would not be
        try call(Self.extensionInterface, "GoToChapter", [.int32(Int32(clamping: index))])
    }

    /// Goes to the chapter after the current one (the first when the position is before it);
    /// returns its index. `.refused` with no chapters and in the last one.
    @discardableResult
    public func nextChapter() throws -> Int {
        let chapters = try chapters()
        guard !chapters.isEmpty else { throw ClientError(.refused, "the current track has no chapters") }
        let target: Int
        if let current = try currentChapter() {
            target = current + 1
        } else {
            let position = try position()  // before the first chapter, or in a gap between two
            target = chapters.firstIndex { $0.start > position } ?? chapters.count
        }
        guard target < chapters.count else { throw ClientError(.refused, "this is the last chapter (\(chapters.count))") }
        try goToChapter(target)
        return target
    }

    /// Back to the start of the current chapter when more than `previousRestartsAfter` into it,
    /// else to the chapter before (the first stays the first: to its start); returns the index.
    /// `.refused` with no chapters and before the first.
    @discardableResult
    public func previousChapter() throws -> Int {
        let chapters = try chapters()
        guard !chapters.isEmpty else { throw ClientError(.refused, "the current track has no chapters") }
        guard let current = try currentChapter() else { throw ClientError(.refused, "the position is before the first chapter") }
        let into = try position() - chapters[current].start
        let target = into > Self.previousRestartsAfter ? current : max(current - 1, 0)
        try goToChapter(target)
        return target
    }

    /// MPRIS `Position`.
    func position() throws -> Duration {
        guard let micro = try property(Self.playerInterface, "Position").int64Value else {
            throw ClientError(.unexpectedReply, "Position is not an int64")
        }
        return .microseconds(micro)
    }
}

extension TonearmClient {
    /// The extension's `NextByChapter`: while on, MPRIS Next and Previous (media keys, `tonearm
    /// next`/`prev`) move by chapter inside a track that has chapters.
    public func nextByChapter() throws -> Bool { try extensionFlag("NextByChapter") }

    public func setNextByChapter(_ on: Bool) throws {
        try setProperty(Self.extensionInterface, "NextByChapter", .bool(on))
    }
}
