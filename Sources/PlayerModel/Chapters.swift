/// One chapter of an item (an audiobook's chapter, a cue sheet's track, a Matroska chapter), as the
/// engine read it: where it starts, where it ends when the file says (else where the next one
/// starts, or the item's end), and its title ("" when it has none).
public struct Chapter: Hashable, Sendable, Codable {
    public var start: Duration
    public var end: Duration?
    public var title: String

    public init(start: Duration, end: Duration?, title: String) {
        self.start = start
        self.end = end
        self.title = title
    }
}

extension [Chapter] {
    /// The index of the chapter at `position`: the last one starting at or before it, unless it
    /// ended before it (a gap between chapters is none); nil before the first. Sorted by start.
    public func index(at position: Duration) -> Int? {
        guard let index = lastIndex(where: { $0.start <= position }) else { return nil }
        if let end = self[index].end, end > self[index].start, position >= end { return nil }
        return index
    }

    /// Where the chapter at `position` (or the gap it is in) ends: the next moment the index can
    /// change while playing forward; nil after the last boundary.
    func nextBoundary(after position: Duration) -> Duration? {
        var boundaries: [Duration] = []
        if let next = first(where: { $0.start > position }) { boundaries.append(next.start) }
        if let index = index(at: position), let end = self[index].end, end > position { boundaries.append(end) }
        return boundaries.min()
    }
}

/// The machine's side of chapters: the current chapter clients were told of, and the one timer
/// that announces the next while playing (rule 7: none while paused, stopped or idle).
struct ChapterState: Sendable {
    /// The item the announcement below is of.
    var itemID: ItemID?
    /// The current chapter last announced; nil: none (no chapters, or before the first).
    var announced: Int?
    /// The position at which the chapter timer is due, while it runs.
    var timerDue: Duration?
    /// A timer fires when the clock says, which may be a little before the position reaches the
    /// boundary: it is asked for this much after it, so that one wake-up finds the new chapter.
    static let margin = Duration.milliseconds(20)
}

extension PlayerMachine {
    /// The current item's chapters (empty: none known).
    public var chapters: [Chapter] { playQueue.current?.chapters ?? [] }

    /// The index of the current chapter at `now`, from the position (computed when read, never
    /// sampled); nil with no chapters or before the first.
    public func currentChapter(at now: ContinuousClock.Instant) -> Int? {
        guard let item = playQueue.current, !item.chapters.isEmpty else { return nil }
        return item.chapters.index(at: position(at: now))
    }

    /// Seeks exactly to the start of chapter `index` of the current item. Refused with
    /// `noSuchChapter` when it has no chapters or no such one, and while linear playback is on.
    public mutating func goToChapter(_ index: Int, now: ContinuousClock.Instant) throws(PlayerError) {
        guard let item = playQueue.current else { throw PlayerError(.noCurrentItem, "there is no current track") }
        guard !item.chapters.isEmpty else {
            throw PlayerError(.noSuchChapter, "the current track has no chapters")
        }
        guard item.chapters.indices.contains(index) else {
            throw PlayerError(.noSuchChapter, "no chapter \(index): the current track has chapters 0 to \(item.chapters.count - 1)")
        }
        try refuseWhileLinear("going to a chapter")
        seekItem(to: item.chapters[index].start, now: now)  // exact: zero tolerances
        planChapters(now: now)
    }

    /// The engine read the current item's chapters (sorted by start).
    mutating func chaptersRead(_ id: ItemID, _ chapters: [Chapter]) {
        guard playQueue.item(id)?.chapters != chapters else { return }
        playQueue.update(id) { $0.chapters = chapters }
        emit(.chaptersChanged(id, chapters))
    }

    /// Announces the current chapter when it changed, and asks for a wake-up at the next boundary
    /// while the position moves: one timer, due at that position, none while paused, seeking,
    /// loading, buffering or stopped. Checked after each engine event, timer and request that can
    /// change it (as `planCrossfade`).
    mutating func planChapters(now: ContinuousClock.Instant, fired: Bool = false) {
        if fired { chapterState.timerDue = nil }
        let currentID = playQueue.currentID
        if chapterState.itemID != currentID { chapterState.itemID = currentID }
        let current = currentChapter(at: now)
        if current != chapterState.announced {
            chapterState.announced = current
            emit(.currentChapterChanged(current))
        }
        guard let item = playQueue.current, !item.chapters.isEmpty, let ready = loadState.ready,
              transport.intent == .playing, ready.pipeline.state == .playing, ready.pipeline.pending == nil,
              ready.seek == nil, ready.pipeline.buffering.pause == nil, settings.rate > 0
        else { return stopChapterTimer() }
        let position = position(at: now)
        guard let boundary = item.chapters.nextBoundary(after: position) else { return stopChapterTimer() }
        guard chapterState.timerDue != boundary else { return }
        chapterState.timerDue = boundary
        append(.startTimer(.chapter, after: (boundary - position) / settings.rate + ChapterState.margin))
    }

    /// An input with no time (a queue edit) left another item current: what was announced of the
    /// one before is no more, and its timer goes. The new item's chapter is announced at its next
    /// engine event.
    mutating func settleChapters() {
        guard chapterState.itemID != playQueue.currentID else { return }
        chapterState.itemID = playQueue.currentID
        stopChapterTimer()
        if chapterState.announced != nil {
            chapterState.announced = nil
            emit(.currentChapterChanged(nil))
        }
    }

    private mutating func stopChapterTimer() {
        guard chapterState.timerDue != nil else { return }
        chapterState.timerDue = nil
        append(.cancelTimer(.chapter))
    }
}

/// Next and Previous by chapter (`NextByChapter`, as Totem's "next chapter" buttons): inside an item
/// that has chapters, Next goes to the start of the next chapter and, in the last, to the next item;
/// Previous more than `restartsAfter` into a chapter goes back to its start, within them to the
/// chapter before, and in the first chapter to the item before (its start when there is none).
/// Each is an exact seek, playing or paused as it was. `xesam:title` stays the item's: a chapter
/// is no track. Linear playback still refuses Next and allows Previous. Saved with the queue.
extension PlayerMachine {
    public var nextByChapter: Bool { settings.nextByChapter }

    public mutating func setNextByChapter(_ on: Bool) {
        guard on != settings.nextByChapter else { return }
        settings.nextByChapter = on
        emit(.nextByChapterChanged(on))
    }

    /// Whether Next would go to a chapter (for CanGoNext): from the chapter announced current, so
    /// that it changes only where `CurrentChapter` does and is announced with it (no timer of its
    /// own, rule 7). Before the first chapter (nothing announced yet) there is one to go to.
    var hasNextChapter: Bool {
        guard settings.nextByChapter, let item = playQueue.current, !item.chapters.isEmpty, item.canSeek else { return false }
        guard chapterState.itemID == item.id, let announced = chapterState.announced else { return true }
        return announced + 1 < item.chapters.count
    }

    /// Next's chapter step: to the first chapter starting after the position; false (nothing done)
    /// when NextByChapter is off, the item has no chapters or cannot seek, or none starts after it.
    mutating func nextChapter(now: ContinuousClock.Instant) throws(PlayerError) -> Bool {
        guard settings.nextByChapter, let item = playQueue.current, !item.chapters.isEmpty, item.canSeek,
              transport.intent != .stopped else { return false }
        let position = position(at: now)
        guard let next = item.chapters.first(where: { $0.start > position }) else { return false }
        seekItem(to: next.start, now: now)  // exact: zero tolerances
        planChapters(now: now)
        return true
    }

    /// Previous's chapter step; false when it is the item's to take (NextByChapter off, no
    /// chapters, an item that cannot seek, stopped, before the first chapter, or within
    /// `restartsAfter` of the first chapter's start with an item before it).
    mutating func previousChapter(hasItemBefore: Bool, now: ContinuousClock.Instant) -> Bool {
        guard settings.nextByChapter, let item = playQueue.current, !item.chapters.isEmpty, item.canSeek,
              transport.intent != .stopped else { return false }
        let position = position(at: now)
        // the chapter started last, also from a gap after it: its start is where "back" goes
        guard let index = item.chapters.lastIndex(where: { $0.start <= position }) else { return false }
        let target: Duration
        if position - item.chapters[index].start > Self.restartsAfter {
            target = item.chapters[index].start
        } else if index > 0 {
            target = item.chapters[index - 1].start
        } else if hasItemBefore {
            return false
        } else {
            target = item.chapters[0].start
        }
        seekItem(to: target, now: now)
        planChapters(now: now)
        return true
    }
}
