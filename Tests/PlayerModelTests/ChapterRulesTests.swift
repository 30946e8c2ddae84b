import PlayerModel
import XCTest

/// Chapters on the machine with a hand clock: the current chapter is computed from the position,
/// announced as it changes, and its one timer exists only while playing, due at the next boundary.
final class ChapterRulesTests: XCTestCase {
    typealias Machine = StreamRulesTests.Machine
    let book = MediaURI(fileURL: URL(fileURLWithPath: "/books/book.mp3"))
    let chapters = [Chapter(start: .zero, end: nil, title: "One"), Chapter(start: .seconds(10), end: nil, title: "Two"),
                    Chapter(start: .seconds(30), end: .seconds(40), title: "Three")]

    func chapterTimers(_ actions: [PlayerAction]) -> [Duration?] {
        actions.compactMap {
            switch $0 {
            case .startTimer(.chapter, let after): after
            case .cancelTimer(.chapter): .some(nil)
            default: nil
            }
        }
    }

    func announced(_ actions: [PlayerAction]) -> [Int?] {
        actions.compactMap { if case .emit(.currentChapterChanged(let index)) = $0 { .some(index) } else { nil } }
    }

    /// The book prerolled with its chapters read, PLAYING at 0.
    func playing() throws -> Machine {
        var m = Machine(ReconnectPolicy())
        _ = try m.machine.enqueue([book], at: .end)
        m.machine.play()
        _ = m.take()
        m.send(.asyncDone(EngineSnapshot(position: m.sample(.zero), duration: .seconds(60), isSeekable: true, loadedRanges: [])))
        m.send(.chapters(chapters))
        XCTAssertEqual(announced(m.actions), [0])
        XCTAssertEqual(chapterTimers(m.actions), [], "not playing yet: no timer")
        m.send(.stateChanged(.playing, pending: nil, position: m.sample(.zero)))
        return m
    }

    func testOneTimerWhilePlayingDueAtEachBoundary() throws {
        var m = try playing()
        XCTAssertEqual(chapterTimers(m.actions), [.milliseconds(10_020)], "at the next start, a little after")
        m.advance(by: .milliseconds(10_020))
        let actions = m.fire(.chapter)
        XCTAssertEqual(announced(actions), [1])
        XCTAssertEqual(chapterTimers(actions), [.milliseconds(20_000)], "then at the one after")
        XCTAssertEqual(m.machine.currentChapter(at: m.now), 1)
        XCTAssertEqual(m.machine.chapters.map(\.title), ["One", "Two", "Three"])
    }

    func testPausedOrStoppedThereIsNoTimerAndTheRateScalesIt() throws {
        var m = try playing()
        m.advance(by: .seconds(5))
        m.machine.pause()
        _ = m.take()
        m.send(.stateChanged(.paused, pending: nil, position: m.sample(.seconds(5))))
        XCTAssertEqual(chapterTimers(m.actions), [nil], "paused: the timer goes")
        m.advance(by: .seconds(3600))
        m.send(.stateChanged(.paused, pending: nil, position: m.sample(.seconds(5))))
        XCTAssertEqual(chapterTimers(m.actions), [], "nothing while paused")
        try m.machine.setRate(2, now: m.now)
        _ = m.take()
        m.send(.seekDone(m.sample(.seconds(5))))  // a rate is a seek
        m.machine.play()
        _ = m.take()
        m.send(.stateChanged(.playing, pending: nil, position: m.sample(.seconds(5))))
        XCTAssertEqual(chapterTimers(m.actions), [.milliseconds(2520)], "5 s of the item at rate 2")
    }

    func testGoToChapterSeeksExactlyAndAnnouncesAndRefusesWhatIsNotThere() throws {
        var m = try playing()
        try m.machine.goToChapter(2, now: m.now)
        let actions = m.take()
        XCTAssertTrue(actions.contains(.engine(.seek(.position(.seconds(30)), .exact, rate: 1))), "\(actions)")
        XCTAssertEqual(announced(actions), [2], "the seek's target is the position")
        for bad in [3, -1, Int.max, Int.min] {
            XCTAssertThrowsError(try m.machine.goToChapter(bad, now: m.now)) { XCTAssertEqual(($0 as? PlayerError)?.code, .noSuchChapter) }
        }
        // past the last chapter's end: none
        m.send(.seekDone(m.sample(.seconds(30))))
        m.advance(by: .seconds(15))
        XCTAssertNil(m.machine.currentChapter(at: m.now))
    }

    func testAnItemWithoutChaptersHasNoneAndGoToChapterIsRefused() throws {
        var m = Machine(ReconnectPolicy())
        _ = try m.machine.enqueue([book], at: .end)
        m.machine.play()
        _ = m.take()
        XCTAssertThrowsError(try m.machine.goToChapter(0, now: m.now)) { XCTAssertEqual(($0 as? PlayerError)?.code, .noSuchChapter) }
        XCTAssertNil(m.machine.currentChapter(at: m.now))
    }
}
