import Basics
import Dispatch
import Foundation
import XCTest

/// The pieces of Foundation proper that Basics stands in for, each held against Foundation itself
/// (which the tests may use) on the inputs the programs give them.
final class BasicsTests: XCTestCase {
    func testPathsAsNSStringTookThemApart() {
        let paths = ["/a/b/c.flac", "/a/b/", "/a", "/", "a", "a/b", "", "rel/x.tar.gz", "/x/.hidden", "/x/a.", "/a//b/",
                     "/music/Ünïcödé dir/trąck 01.ogg", "/a b/c d.mp3"]
        for path in paths {
            let ns = path as NSString
            // swift-corelibs-foundation 6.3.1 traps on a single relative component ("a")
            if path.contains("/") || path.isEmpty {
                XCTAssertEqual(Path.directory(of: path), ns.deletingLastPathComponent, "directory of \(path)")
            }
            XCTAssertEqual(Path.lastComponent(path), ns.lastPathComponent, "last component of \(path)")
            XCTAssertEqual(Path.extension(of: path), ns.pathExtension, "extension of \(path)")
            XCTAssertEqual(Path.nameWithoutExtension(path), (ns.lastPathComponent as NSString).deletingPathExtension, "name of \(path)")
        }
        XCTAssertEqual(Path.directory(of: "a"), "")
        for (directory, name) in [("/a", "b"), ("/a/", "b"), ("/", "b"), ("a", "b.mp3"), ("/a", "b/c"), ("/music", "Ünï cödé.flac")] {
            XCTAssertEqual(Path.appending(name, to: directory), (directory as NSString).appendingPathComponent(name), "\(directory) + \(name)")
        }
    }

    func testTildeIsTheHomeDirectory() {
        XCTAssertEqual(Path.expandingTilde("~", home: "/home/x"), "/home/x")
        XCTAssertEqual(Path.expandingTilde("~/Music/a b.mp3", home: "/home/x"), "/home/x/Music/a b.mp3")
        XCTAssertEqual(Path.expandingTilde("/a/~b", home: "/home/x"), "/a/~b")
        XCTAssertEqual(Path.expandingTilde("~root/x"), ("~root/x" as NSString).expandingTildeInPath)
        XCTAssertEqual(Path.expandingTilde("~no-such-user-here/x"), "~no-such-user-here/x")
        XCTAssertEqual(Path.homeDirectory(environment: ["HOME": "/h"]), "/h")
        XCTAssertEqual(Path.homeDirectory(), NSHomeDirectory())
    }

    func testTrimmingAsFoundationTrims() {
        for text in ["  a b  ", "\t\r\n x \u{00A0}\u{2028}", "", "   ", "\u{FEFF}x ", "a", " é\u{0301} ", "\r\n"] {
            XCTAssertEqual(text.trimmingWhitespace(), text.trimmingCharacters(in: .whitespacesAndNewlines), "\(text.debugDescription)")
        }
    }

    func testPercentEscapesAsFoundationDecodes() {
        for text in ["a%20b", "%C3%A9t%C3%A9", "100%", "%zz", "%4", "plain", "%FF%FE", "%2F%2f", ""] {
            XCTAssertEqual(text.removingPercentEscapes(), text.removingPercentEncoding, text)
        }
    }

    /// A line of the video window's protocol: one line whatever the text, and back as it was.
    func testLineBreaksAndPercentsEscapedComeBackAsTheyWere() {
        for text in ["/videos/a\nb.mp4", "100% \r\n", "%0A", "plain", "é\u{1F3B5}", ""] {
            let line = text.percentEscapingLineBreaks()
            XCTAssertFalse(line.contains("\n") || line.contains("\r"), line)
            XCTAssertEqual(line.removingPercentEscapes(), text)
        }
    }

    func testDigitsAsStringFormat() {
        XCTAssertEqual(Digits.padded(7, width: 4), String(format: "%04d", 7))
        XCTAssertEqual(Digits.padded(2026, width: 2), String(format: "%02d", 2026))
        XCTAssertEqual(Digits.padded(-5, width: 3), String(format: "%03d", -5))
        let big: UInt64 = 0xcbf2_9ce4_8422_2325
        XCTAssertEqual(Digits.padded(big, width: 16, radix: 16), String(format: "%016llx", big))
        XCTAssertEqual(Digits.padded(UInt64(255), width: 16, radix: 16), String(format: "%016llx", UInt64(255)))
        for value in [0.0, 1.25, 2.96, 0.04, 3600, 1e-9, -1.26, 0.75] {
            XCTAssertEqual(Digits.fixed(value, fractionDigits: 1), String(format: "%.1f", value), "\(value)")
        }
    }

    /// Natural order is what `tonearm add` and `Enqueue` sort a folder by, and what the MPRIS
    /// playlists' `Alphabetical` order is (it was `localizedStandardCompare`, Foundation proper).
    func testNaturalOrder() {
        let names = ["track10", "Track 2", "track 1", "10 - a", "2 - b", "a", "B", "c", "x007", "x7", "x06", "file99999999999999999999", "file100000000000000000000"]
        XCTAssertEqual(names.sorted(by: NaturalOrder.precedes),
                       ["2 - b", "10 - a", "a", "B", "c", "file99999999999999999999", "file100000000000000000000",
                        "track 1", "Track 2", "track10", "x06", "x007", "x7"])
        XCTAssertEqual(NaturalOrder.sorted(names), names.sorted(by: NaturalOrder.precedes), "keys made once, the same order")
        XCTAssertEqual(NaturalOrder.sorted(["b", "A", "a", "B"]), ["A", "a", "B", "b"])
        XCTAssertEqual(NaturalOrder.compare("a", "a"), .orderedSame)
        XCTAssertEqual(NaturalOrder.compare("A", "a"), .orderedAscending, "case breaks ties, for a fixed order")
    }

    /// Where names are letters, digits and spaces, the order is Finder's (`localizedStandardCompare`).
    func testNaturalOrderAgreesWithLocalizedStandardCompare() {
        let names = ["Road trip", "road trip 2", "Road Trip 10", "Mix 1", "mix 01b", "Mix 9", "Mix 10", "2020", "2019 best of", "a", "B", "zz top", "Chill", "chill 3"]
        XCTAssertEqual(names.sorted(by: NaturalOrder.precedes),
                       names.sorted { $0.localizedStandardCompare($1) == .orderedAscending })
    }

    func testLockExcludes() {
        let lock = Lock()
        let counter = Counter()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<1000 { lock.withLock { counter.value += 1 } }
        }
        XCTAssertEqual(counter.value, 8000)
    }

    func testConditionWakesAWaiterAndTimesOut() {
        let condition = Condition()
        let state = Counter()
        let woke = DispatchSemaphore(value: 0)
        detachThread(name: "tonearm.test") {
            let ready = condition.withLock { () -> Bool in
                while state.value == 0 && condition.wait(until: .now + .seconds(10)) {}
                return state.value == 1
            }
            XCTAssertTrue(ready)
            woke.signal()
        }
        condition.withLock {
            state.value = 1
            condition.broadcast()
        }
        XCTAssertEqual(woke.wait(timeout: .now() + 10), .success)
        XCTAssertFalse(condition.withLock { condition.wait(until: .now - .seconds(1)) }, "a deadline passed already")
        XCTAssertFalse(condition.withLock { condition.wait(until: .now + .milliseconds(1)) }, "no broadcast: the deadline")
    }

    func testDetachedThreadHasItsName() throws {
        let named = DispatchSemaphore(value: 0)
        let name = Counter()
        detachThread(name: "tonearm.dispose") {
            name.text = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            named.signal()
        }
        XCTAssertEqual(named.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(name.text, "tonearm.dispose\n")
    }

    func testSystemErrorSaysWhatTheSystemSaid() {
        XCTAssertThrowsError(try Data(contentsOf: URL(fileURLWithPath: "/nonexistent/tonearm-x"))) { error in
            XCTAssertEqual(SystemError.reason(error), "No such file or directory")
        }
        XCTAssertThrowsError(try FileManager.default.createDirectory(atPath: "/proc/tonearm/x", withIntermediateDirectories: true)) { error in
            XCTAssertEqual(SystemError.reason(error), "No such file or directory")
        }
    }
}

private final class Counter: @unchecked Sendable {
    // @unchecked: the tests guard it with the lock under test, or hand it over through a semaphore
    var value = 0
    var text = ""
}
