import Foundation
import TestSupport
import XCTest

/// The video window's on-screen bar (issue 28) on a real X display: the pointer moved over the
/// window with xdotool, the bar seen in screenshots of the window's bottom over the red clip, and
/// `ControlsVisible` over D-Bus. X has no event a test can wait on from outside: the screen is
/// read in bounded loops (`waitForX`).
final class VideoControlsTests: VideoTestCase {

    /// The bar's rows: the clip is 320x240 and the bar sits at its bottom (textoverlay's
    /// `valignment` bottom, 25 px of padding under the text).
    static let barRows = 80

    /// How many pixels of the window's bottom are not the clip's red: none while the bar hides,
    /// the shaded bar and its text while it shows.
    func notRed(_ x: XDisplay, _ window: String) throws -> Int {
        let shot = try x.bottom(Self.barRows, of: window)
        var count = 0
        for row in 0..<shot.height {
            for column in 0..<shot.width where !(shot.colour(column, row) == .red) { count += 1 }
        }
        return count
    }

    /// Starts the X display with the pointer in its corner, where no window opens (a window that
    /// opens under the pointer gets an enter event, which SDL reports as a movement).
    override func startDisplay() throws -> XDisplay {
        let x = try super.startDisplay()
        _ = try x.run("xdotool", ["mousemove", "0", "0"])
        return x
    }

    /// The red clip playing in its window, the bar not showing.
    private func playRed(_ x: XDisplay) throws -> String {
        let window = try openRedSquare(on: x)
        try x.waitForX("the window to be 320x240") { try x.geometry(of: window).size == (320, 240) }
        try x.waitForX("red in the middle of the window") { try x.colour(atMiddleOf: window) == .red }
        try x.waitForX("no bar at the bottom of the window") { try notRed(x, window) == 0 }
        return window
    }

    private func move(_ x: XDisplay, _ window: String, _ px: Int = 160, _ py: Int = 60) throws {
        _ = try x.run("xdotool", ["mousemove", "--window", window, String(px), String(py)])
    }

    /// Waits for the bar to show, and returns how many of its pixels are not red.
    @discardableResult
    private func waitForBar(_ x: XDisplay, _ window: String, _ what: String) throws -> Int {
        var seen = 0
        try x.waitForX(what) {
            seen = try notRed(x, window)
            return seen > 200
        }
        return seen
    }

    func testMovingThePointerShowsTheBarWhichFollowsThePositionAndHidesTwoSecondsAfterTheLastMove() throws {
        let x = try startDisplay()
        try harness.start(environment: ["DISPLAY": x.name])
        let window = try playRed(x)

        var moved = Date()
        try move(x, window)
        try waitForBar(x, window, "the bar to show after the pointer moved")
        let first = try x.bottom(Self.barRows, of: window).bytes
        // the pointer keeps moving for 2.4 s: the bar stays, and its position text moves on
        for step in 0..<6 {
            try move(x, window, 100 + step * 20, 60 + step * 10)
            moved = Date()
            usleep(400_000)
            XCTAssertGreaterThan(try notRed(x, window), 200, "the bar hid while the pointer moved (step \(step))")
        }
        let later = try x.bottom(Self.barRows, of: window).bytes
        XCTAssertNotEqual(first, later, "the bar's text did not change over 2.4 s of playing")
        // and hides 2 s after the last move
        try x.waitForX("the bar to hide after the pointer stopped") { try notRed(x, window) == 0 }
        let shownFor = Date().timeIntervalSince(moved)
        XCTAssertGreaterThanOrEqual(shownFor, 1.7, "the bar hid \(shownFor) s after the last move, not 2")
        try harness.waitForStatus("Playing")
    }

    /// A paused video shows the frame it drew last: the bar still shows and hides on it, and the
    /// redraws that take are no seek a client hears of.
    func testPausedTheBarShowsAndStillHidesAfterTwoSeconds() throws {
        let x = try startDisplay()
        try harness.start(environment: ["DISPLAY": x.name])
        let window = try playRed(x)
        try harness.call(H.player, "Pause")
        try harness.waitForStatus("Paused")
        Thread.sleep(forTimeInterval: 1)  // the pause settles first
        // read once the pipeline is paused: until then Position runs on from the last sample (under
        // ASan the pipeline paused 70 ms after PlaybackStatus said so, and Position went back to it)
        let position = try harness.get(H.player, "Position").int64
        let before = wakeUps()
        let mark = harness.mark()

        let moved = Date()
        try move(x, window)
        try waitForBar(x, window, "the bar to show on the paused frame")
        try x.waitForX("the bar to hide on the paused frame") { try notRed(x, window) == 0 }
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(moved), 1.7)
        XCTAssertEqual(try harness.get(H.player, "PlaybackStatus").string, "Paused")
        XCTAssertEqual(try harness.get(H.player, "Position").int64, position, "the redraws moved the position")
        let seeked = harness.watcher.messages(from: mark).filter { $0.member == "Seeked" }
        XCTAssertEqual(seeked.count, 0, "a redraw was announced as a seek: \(seeked)")
        XCTAssertTrue(try x.colour(atMiddleOf: window) == .red)
        // the hidden bar left no timer: what wakes now woke before the bar showed, and nothing else
        Thread.sleep(forTimeInterval: 1)  // what the last redraw started settles first
        let after = wakeUps()
        let added = after.filter { before[$0.key] == nil }
        XCTAssertLessThanOrEqual(added.values.reduce(0, +), 1, "woken since the bar showed and hid: \(added) (before it: \(before))")
        XCTAssertLessThanOrEqual(after.values.reduce(0, +), before.values.reduce(0, +) + 2,
                                 "woken more often since the bar showed and hid: \(after) (before it: \(before))")
    }

    /// The threads of tonearmd that woke in 3 s, and how often. A paused video already has one
    /// that wakes 20 times a second, not ours: it does with no bar ever shown.
    private func wakeUps() -> [String: Int] {
        let (_, threads) = WakeUps.count(harness.daemon.pid, window: 3, sanitizerThreadName: "tonearmd")
        var counts: [String: Int] = [:]
        for thread in threads {  // "TID NAME +N"
            let words = thread.split(separator: " ")
            counts[String(words[0])] = Int(words.last!.dropFirst()) ?? 0
        }
        return counts
    }

    func testControlsVisibleFalseKeepsTheBarHiddenAndIsAnnounced() throws {
        let x = try startDisplay()
        try harness.start(environment: ["DISPLAY": x.name])
        XCTAssertEqual(try harness.get(H.extensionInterface, "ControlsVisible").bool, true, "the bar shows by default")
        // set with no window
        var mark = harness.mark()
        try harness.set(H.extensionInterface, "ControlsVisible", "b", "false")
        try harness.waitForChange(H.extensionInterface, "ControlsVisible false", from: mark) { $0["ControlsVisible"]?.bool == false }
        let window = try playRed(x)

        // moving shows nothing: the bottom stays red for the 2 s a bar would show
        try move(x, window)
        let end = Date(timeIntervalSinceNow: 2)
        var grabs = 0
        while Date() < end {
            XCTAssertEqual(try notRed(x, window), 0, "a bar showed with ControlsVisible false")
            grabs += 1
        }
        XCTAssertGreaterThan(grabs, 2)

        // true again: the next move shows it; false while it shows hides it at once
        mark = harness.mark()
        try harness.set(H.extensionInterface, "ControlsVisible", "b", "true")
        try harness.waitForChange(H.extensionInterface, "ControlsVisible true", from: mark) { $0["ControlsVisible"]?.bool == true }
        try move(x, window, 200, 100)
        try waitForBar(x, window, "the bar to show once ControlsVisible is true")
        usleep(300_000)  // past the program's 250 ms between motions: the next move counts
        try move(x, window, 100, 50)
        let hiding = Date()
        try harness.set(H.extensionInterface, "ControlsVisible", "b", "false")
        try x.waitForX("the bar to hide when ControlsVisible goes false") { try notRed(x, window) == 0 }
        XCTAssertLessThan(Date().timeIntervalSince(hiding), 1.5, "it hid when its time ran out, not when it was turned off")
    }

    func testControlsVisibleIsKeptAcrossARestartAndRefusesAWrongType() throws {
        try harness.start()
        let error = try harness.errorReply(H.properties, "Set", ["string:\(H.extensionInterface)", "string:ControlsVisible",
                                                                  "variant:string:no"])
        XCTAssertEqual(error?.name, "org.freedesktop.DBus.Error.InvalidArgs")
        /// Quit (it saves what it was left doing), and a new tonearmd.
        func quitAndStartAgain() throws {
            let quitting = harness.daemon
            harness.exitExpected.insert(quitting.pid)
            try harness.call(H.root, "Quit")
            XCTAssertEqual(quitting.waitForExit(timeout: 10), 0)
            try harness.start()
        }
        try harness.set(H.extensionInterface, "ControlsVisible", "b", "false")
        try quitAndStartAgain()
        XCTAssertEqual(try harness.getAll(H.extensionInterface)["ControlsVisible"]?.bool, false)
        try harness.set(H.extensionInterface, "ControlsVisible", "b", "true")
        try quitAndStartAgain()
        XCTAssertEqual(try harness.get(H.extensionInterface, "ControlsVisible").bool, true)
    }
}
