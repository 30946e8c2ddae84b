import PlayerModel
import XCTest

/// `NextByChapter` on the machine with a hand clock: Next and Previous move by chapter inside an
/// item that has chapters, and by item at its edges; CanGoNext agrees; linear playback still
/// refuses Next; off, nothing changes.
final class NextByChapterRulesTests: XCTestCase {
    typealias Machine = StreamRulesTests.Machine
    let first = MediaURI(fileURL: URL(fileURLWithPath: "/books/first.mp3"))
    let book = MediaURI(fileURL: URL(fileURLWithPath: "/books/book.mp3"))
    let last = MediaURI(fileURL: URL(fileURLWithPath: "/books/last.mp3"))
    let chapters = [Chapter(start: .zero, end: nil, title: "One"), Chapter(start: .seconds(10), end: nil, title: "Two"),
                    Chapter(start: .seconds(30), end: nil, title: "Three")]

    func seeks(_ actions: [PlayerAction]) -> [Duration] {
        actions.compactMap { if case .engine(.seek(.position(let to), .exact, _)) = $0 { to } else { nil } }
    }

    func loads(_ actions: [PlayerAction]) -> [MediaURI] {
        actions.compactMap { if case .engine(.load(let uri, _)) = $0 { uri } else { nil } }
    }

    /// first, book, last: the book current, prerolled with its chapters read, PLAYING at `at`.
    func playingBook(at start: Duration = .zero, nextByChapter: Bool = true) throws -> Machine {
        var m = Machine(ReconnectPolicy())
        _ = try m.machine.enqueue([first, book, last], at: .end)
        m.machine.setNextByChapter(nextByChapter)
        m.machine.play()
        try m.machine.next()
        _ = m.take()
        XCTAssertEqual(m.machine.currentItem?.uri, book)
        m.send(.asyncDone(EngineSnapshot(position: m.sample(start), duration: .seconds(60), isSeekable: true, loadedRanges: [])))
        m.send(.chapters(chapters))
        m.send(.stateChanged(.playing, pending: nil, position: m.sample(start)))
        _ = m.take()
        return m
    }

    /// The seek asked for done: the position is `at`.
    func seekDone(_ m: inout Machine, at position: Duration) {
        m.send(.seekDone(m.sample(position)))
        _ = m.take()
    }

    func testNextGoesToTheNextChapterThenInTheLastToTheNextItem() throws {
        var m = try playingBook(at: .seconds(2))
        XCTAssertTrue(m.machine.canGoNext)
        try m.machine.next(now: m.now)
        var actions = m.take()
        XCTAssertEqual(seeks(actions), [.seconds(10)], "\(actions)")
        XCTAssertEqual(loads(actions), [], "the same item")
        XCTAssertEqual(m.machine.currentItem?.uri, book)
        seekDone(&m, at: .seconds(10))
        try m.machine.next(now: m.now)
        XCTAssertEqual(seeks(m.take()), [.seconds(30)])
        seekDone(&m, at: .seconds(30))
        XCTAssertEqual(m.machine.currentChapter(at: m.now), 2)
        XCTAssertTrue(m.machine.canGoNext, "the next item is there")
        try m.machine.next(now: m.now)
        actions = m.take()
        XCTAssertEqual(seeks(actions), [])
        XCTAssertEqual(m.machine.currentItem?.uri, last, "in the last chapter: the next item")
    }

    func testCanGoNextInTheLastChapterOfTheLastItemIsFalse() throws {
        var m = Machine(ReconnectPolicy())
        _ = try m.machine.enqueue([book], at: .end)
        m.machine.setNextByChapter(true)
        m.machine.play()
        _ = m.take()
        m.send(.asyncDone(EngineSnapshot(position: m.sample(.zero), duration: .seconds(60), isSeekable: true, loadedRanges: [])))
        m.send(.chapters(chapters))
        m.send(.stateChanged(.playing, pending: nil, position: m.sample(.zero)))
        _ = m.take()
        XCTAssertTrue(m.machine.canGoNext, "a chapter after the first, no item after the book")
        try m.machine.goToChapter(2, now: m.now)
        let actions = m.take()
        XCTAssertTrue(actions.contains(.emit(.currentChapterChanged(2))), "\(actions)")
        XCTAssertFalse(m.machine.canGoNext, "the last chapter of the last item")
        m.machine.setNextByChapter(false)
        _ = m.take()
        m.machine.setNextByChapter(true)
        XCTAssertEqual(m.take(), [.emit(.nextByChapterChanged(true))])
    }

    func testPreviousGoesToTheChaptersStartThenTheOneBeforeThenTheItemBefore() throws {
        var m = try playingBook(at: .seconds(15))
        m.machine.previous(now: m.now)
        XCTAssertEqual(seeks(m.take()), [.seconds(10)], "more than 3 s in: the chapter's start")
        seekDone(&m, at: .seconds(10))
        m.advance(by: .seconds(1))
        m.machine.previous(now: m.now)
        XCTAssertEqual(seeks(m.take()), [.zero], "within 3 s: the chapter before")
        seekDone(&m, at: .zero)
        m.advance(by: .seconds(1))
        m.machine.previous(now: m.now)
        let actions = m.take()
        XCTAssertEqual(seeks(actions), [])
        XCTAssertEqual(m.machine.currentItem?.uri, first, "the first chapter within 3 s: the item before")
    }

    func testPreviousInTheFirstChapterWithNoItemBeforeGoesToItsStart() throws {
        var m = Machine(ReconnectPolicy())
        _ = try m.machine.enqueue([book], at: .end)
        m.machine.setNextByChapter(true)
        m.machine.play()
        _ = m.take()
        m.send(.asyncDone(EngineSnapshot(position: m.sample(.seconds(1)), duration: .seconds(60), isSeekable: true, loadedRanges: [])))
        m.send(.chapters(chapters))
        m.send(.stateChanged(.playing, pending: nil, position: m.sample(.seconds(1))))
        _ = m.take()
        m.machine.previous(now: m.now)
        XCTAssertEqual(seeks(m.take()), [.zero])
        XCTAssertEqual(m.machine.currentItem?.uri, book)
    }

    func testOffNextAndPreviousMoveByItem() throws {
        var m = try playingBook(at: .seconds(2), nextByChapter: false)
        try m.machine.next(now: m.now)
        XCTAssertEqual(m.machine.currentItem?.uri, last)
        XCTAssertFalse(m.machine.nextByChapter)
    }

    func testLinearPlaybackStillRefusesNextAndAllowsPrevious() throws {
        var m = try playingBook(at: .seconds(15))
        m.machine.setLinearPlayback(true)
        _ = m.take()
        XCTAssertFalse(m.machine.canGoNext)
        XCTAssertThrowsError(try m.machine.next(now: m.now)) { XCTAssertEqual(($0 as? PlayerError)?.code, .linearPlayback) }
        XCTAssertEqual(seeks(m.take()), [])
        m.machine.previous(now: m.now)
        XCTAssertEqual(seeks(m.take()), [.seconds(10)])
    }
}
