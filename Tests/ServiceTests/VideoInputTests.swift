import Foundation
import TestSupport
import XCTest

/// Input in the video window (issue 28): keys and a double click sent by xdotool to Tonearm's
/// window on a real X display, files and text dropped on it by an XDND source of the test's own
/// (`Tests/PySupport/xdnd_source.py`), and what a user then sees over D-Bus.
final class VideoInputTests: VideoTestCase {
    /// Opens the red clip, waits until it plays prerolled in its window, and gives that window the
    /// focus, as a person's click would: keys go to the focused window.
    func playInFocusedWindow(on x: XDisplay) throws -> String {
        let window = try openRedSquare(on: x)
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay")
        _ = try x.run("xdotool", ["windowactivate", "--sync", window])
        try x.waitForX("Tonearm's window to have the focus") { try x.activeWindow() == window }
        return window
    }

    /// Presses `key` (xdotool's name) in `window`, then waits for the PropertiesChanged of
    /// `interface` whose properties satisfy `predicate`.
    func press(_ key: String, in window: String, on x: XDisplay, _ interface: String, _ what: String,
               where predicate: ([String: MonitorValue]) -> Bool) throws {
        let mark = harness.mark()
        _ = try x.run("xdotool", ["key", "--window", window, key])
        try harness.waitForChange(interface, "\(what) after \(key)", from: mark, where: predicate)
    }

    /// Presses `key` in `window` and returns the position of the Seeked that follows, in seconds.
    func seek(_ key: String, in window: String, on x: XDisplay) throws -> Double {
        let mark = harness.mark()
        _ = try x.run("xdotool", ["key", "--window", window, key])
        return Double(try harness.waitForSeeked(from: mark)) / 1e6
    }

    func testKeysPlayPauseSeekStepTheVolumeMuteAndToggleFullscreenAndPictureInPicture() throws {
        let x = try startDisplay()
        let daemon = try harness.start(environment: ["DISPLAY": x.name])
        let window = try playInFocusedWindow(on: x)

        // space: PlayPause
        try press("space", in: window, on: x, H.player, "PlaybackStatus Paused") { $0["PlaybackStatus"]?.string == "Paused" }
        try press("space", in: window, on: x, H.player, "PlaybackStatus Playing") { $0["PlaybackStatus"]?.string == "Playing" }
        try press("space", in: window, on: x, H.player, "PlaybackStatus Paused") { $0["PlaybackStatus"]?.string == "Paused" }

        // ← and →: 5 s from the position (paused: it holds), never before 0
        let start = Double(try harness.position) / 1e6
        XCTAssertLessThan(start, 5, "paused within the clip's first seconds")
        XCTAssertEqual(try seek("Right", in: window, on: x), start + 5, accuracy: 0.1, "→ from \(start) s")
        XCTAssertEqual(try seek("Left", in: window, on: x), start, accuracy: 0.1, "← back")
        XCTAssertEqual(try seek("Left", in: window, on: x), 0, accuracy: 0.05, "← before 0 is 0")
        XCTAssertEqual(try harness.playbackStatus, "Paused", "a seek while paused stays paused (rule 5)")

        // ↓ and ↑: the volume in steps of 5%, never above 100%
        try press("Down", in: window, on: x, H.player, "Volume 0.95") { $0["Volume"]?.double == 0.95 }
        try press("Down", in: window, on: x, H.player, "Volume 0.9") { $0["Volume"]?.double == 0.9 }
        try press("Up", in: window, on: x, H.player, "Volume 0.95") { $0["Volume"]?.double == 0.95 }
        try press("Up", in: window, on: x, H.player, "Volume 1") { $0["Volume"]?.double == 1 }
        let top = harness.mark()
        _ = try x.run("xdotool", ["key", "--window", window, "Up", "m"])
        try harness.waitForChange(H.extensionInterface, "Muted true after m", from: top) { $0["Muted"]?.bool == true }
        XCTAssertFalse(harness.propertiesChanged(H.player, from: top).contains { $0.changed["Volume"] != nil }, "↑ at 100% changes nothing")
        try press("m", in: window, on: x, H.extensionInterface, "Muted false") { $0["Muted"]?.bool == false }
        XCTAssertEqual(try harness.get(H.player, "Volume").double, 1, "muting keeps the volume")

        // f: fullscreen, the screen's size; Esc: back; Esc again: nothing
        try press("f", in: window, on: x, H.root, "Fullscreen true") { $0["Fullscreen"]?.bool == true }
        try x.waitForX("the window to cover the screen") {
            let geometry = try x.geometry(of: window)
            return geometry.x == 0 && geometry.y == 0 && geometry.size == (1024, 768)
        }
        try press("Escape", in: window, on: x, H.root, "Fullscreen false") { $0["Fullscreen"]?.bool == false }
        try x.waitForX("the window to be 320x240 again") { try x.geometry(of: window).size == (320, 240) }
        try press("f", in: window, on: x, H.root, "Fullscreen true") { $0["Fullscreen"]?.bool == true }
        try press("f", in: window, on: x, H.root, "Fullscreen false") { $0["Fullscreen"]?.bool == false }
        let calm = harness.mark()
        _ = try x.run("xdotool", ["key", "--window", window, "Escape", "q", "ctrl+f", "space"])
        try harness.waitForChange(H.player, "PlaybackStatus Playing after space", from: calm) { $0["PlaybackStatus"]?.string == "Playing" }
        XCTAssertTrue(harness.propertiesChanged(H.root, from: calm).isEmpty, "Esc out of a window, q and Ctrl+F do nothing")

        // p: picture-in-picture, a quarter of the screen's width at the video's aspect, and back
        try press("p", in: window, on: x, H.extensionInterface, "PictureInPicture true") { $0["PictureInPicture"]?.bool == true }
        try x.waitForX("the window to be 256x192") { try x.geometry(of: window).size == (256, 192) }
        try press("p", in: window, on: x, H.extensionInterface, "PictureInPicture false") { $0["PictureInPicture"]?.bool == false }
        try x.waitForX("the window to be 320x240 again") { try x.geometry(of: window).size == (320, 240) }
        XCTAssertTrue(daemon.isRunning)
    }

    /// Linear playback (issue 40): ← and → do nothing, while space still pauses and ↓ still steps
    /// the volume. The window's lines are handled in order, so once ↓'s Volume is announced the
    /// arrows before it were handled, and a seek they had asked would already show in Position.
    func testArrowKeysDoNotSeekWhileLinearPlaybackIsOn() throws {
        let x = try startDisplay()
        try harness.start(environment: ["DISPLAY": x.name])
        let window = try playInFocusedWindow(on: x)
        try press("space", in: window, on: x, H.player, "PlaybackStatus Paused") { $0["PlaybackStatus"]?.string == "Paused" }
        try harness.set(H.extensionInterface, "LinearPlayback", "b", "true")
        let position = try harness.position
        let mark = harness.mark()
        _ = try x.run("xdotool", ["key", "--window", window, "Right", "Left", "Right", "Down"])
        try harness.waitForChange(H.player, "Volume 0.95 after the arrows", from: mark) { $0["Volume"]?.double == 0.95 }
        XCTAssertEqual(try harness.position, position, "no key moved it")
        XCTAssertEqual(harness.watcher.messages(from: mark).filter { $0.member == "Seeked" }.count, 0)
        XCTAssertEqual(try harness.playbackStatus, "Paused")
    }

    func testADoubleClickTogglesFullscreen() throws {
        let x = try startDisplay()
        try harness.start(environment: ["DISPLAY": x.name])
        let window = try playInFocusedWindow(on: x)
        for fullscreen in [true, false] {
            let mark = harness.mark()
            // xdotool moves the pointer and clicks through XTEST, as a mouse would
            _ = try x.run("xdotool", ["mousemove", "--window", window, "160", "120", "click", "--repeat", "2", "--delay", "80", "1"])
            try harness.waitForChange(H.root, "Fullscreen \(fullscreen) after a double click", from: mark) {
                $0["Fullscreen"]?.bool == fullscreen
            }
            try x.waitForX("the window to \(fullscreen ? "cover" : "leave") the screen") {
                (try x.geometry(of: window).size == (1024, 768)) == fullscreen
            }
        }
        // a single click, then a key: the window reports both in order, so once the key's Paused
        // is announced, whatever the click did would have been too
        let single = harness.mark()
        _ = try x.run("xdotool", ["mousemove", "--window", window, "160", "120", "click", "1", "key", "--window", window, "space"])
        try harness.waitForChange(H.player, "PlaybackStatus Paused after space", from: single) { $0["PlaybackStatus"]?.string == "Paused" }
        XCTAssertTrue(harness.propertiesChanged(H.root, from: single).isEmpty, "a single click does nothing")
    }

    // MARK: Drops

    /// Drops `items` on `window` through XDND, offered as `type`; returns once the window finished.
    func drop(_ items: [String], as type: String = "text/uri-list", on window: String, _ x: XDisplay) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("PySupport/xdnd_source.py")
        let output = try Tool.run("/usr/bin/python3", [script.path, window, type] + items, environment: ["DISPLAY": x.name], timeout: 20)
        guard output.status == 0, output.stdout.contains("finished accepted") else {
            throw TestError("the drop of \(items) on \(window) failed (\(output.status)): \(output.stdout)\(output.stderr)")
        }
    }

    /// Tonearm's one window, once it shows `colour`: the video that follows a video shows in the same
    /// window, or in a new one when it asked for it after the old one was told to close.
    func window(showing colour: Colour, on x: XDisplay) throws -> String {
        var shown = ""
        try x.waitForX("one window of Tonearm's, \(colour) in its middle") {
            let windows = try x.windows(classed: "tonearm")
            guard windows.count == 1 else { return false }
            shown = windows[0]
            return try x.colour(atMiddleOf: shown) == colour
        }
        return shown
    }

    /// The xesam:url of every track, in the list's order.
    func trackURLs() throws -> [String] {
        let ids = try harness.tracks
        let reply = try harness.call(H.trackList, "GetTracksMetadata", "ao", ["\(ids.count)"] + ids)
        let list = (reply.first?.data as? [Any] ?? []).compactMap { Typed(type: "a{sv}", data: $0).dictionary }
        return list.compactMap { $0["xesam:url"]?.string }
    }

    func testDroppedFilesAndFoldersAreQueuedAfterTheCurrentItemAndTheFirstPlays() throws {
        let x = try startDisplay()
        let red = try mp4("red", title: "Red-Square"), green = try webm("green")
        // a folder: walked off the queue that answers, in natural order, for what GStreamer plays
        let folder = harness.directory.appendingPathComponent("dropped folder")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let inFolder = [folder.appendingPathComponent("2 tone.wav"), folder.appendingPathComponent("10 blue.ogv")]
        try FileManager.default.copyItem(at: try short(), to: inFolder[0])
        try FileManager.default.copyItem(at: try ogv("blue"), to: inFolder[1])
        try Data("not media".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        try harness.start(environment: ["DISPLAY": x.name])
        let window = try playInFocusedWindow(on: x)

        let mark = harness.mark()
        try drop([H.uri(green), URL(fileURLWithPath: folder.path, isDirectory: true).absoluteString], on: window, x)
        try harness.waitForChange(H.player, "the green clip current", from: mark) {
            $0["Metadata"]?.dictionary?["xesam:url"]?.string == H.uri(green)
        }
        XCTAssertEqual(try trackURLs(), [red, green, inFolder[0], inFolder[1]].map(H.uri), "after the red clip, in the drop's order")
        try harness.waitForStatus("Playing")
        _ = try self.window(showing: .green, on: x)
    }

    func testTextDroppedIsOpenedAsAURIAndBadDropsAreLoggedWithTheirErrors() throws {
        let x = try startDisplay()
        let red = try mp4("red", title: "Red-Square"), blue = try ogv("blue")
        let notes = harness.directory.appendingPathComponent("notes.txt")
        try Data("not media".utf8).write(to: notes)
        let daemon = try harness.start(environment: ["DISPLAY": x.name])
        let window = try playInFocusedWindow(on: x)

        // a missing file: OpenUri's FileNotFound, logged; nothing of that drop is queued
        let missing = harness.directory.appendingPathComponent("missing.mp4")
        var logged = daemon.output.utf8.count
        try drop([H.uri(red), H.uri(missing)], on: window, x)
        try daemon.waitForLog("not queued from the video window: io.github.tonearm.Error.FileNotFound: no such file: \(missing.path)",
                              after: logged)
        // a scheme Tonearm does not play, dropped as text (a browser's link)
        logged = daemon.output.utf8.count
        try drop(["ftp://example.org/clip.mp4"], as: "text/plain", on: window, x)
        try daemon.waitForLog("not queued from the video window: io.github.tonearm.Error.UnsupportedScheme: ", after: logged)
        XCTAssertEqual(try trackURLs(), [H.uri(red)])
        XCTAssertEqual(try harness.playbackStatus, "Playing")

        // a URI dropped as text plays
        var mark = harness.mark()
        try drop([H.uri(blue)], as: "text/plain", on: window, x)
        try harness.waitForChange(H.player, "the blue clip current", from: mark) {
            $0["Metadata"]?.dictionary?["xesam:url"]?.string == H.uri(blue)
        }
        try harness.waitForStatus("Playing")

        // a file that is no media is queued and fails as it would from OpenUri
        mark = harness.mark()
        try drop([H.uri(notes)], on: try self.window(showing: .blue, on: x), x)
        let failed = try harness.waitForSignal(H.extensionInterface, "ItemFailed", from: mark)
        XCTAssertEqual(failed.arguments.dropFirst().first?.string, "io.github.tonearm.Error.UnsupportedFormat", "\(failed)")
        XCTAssertEqual(try trackURLs(), [red, blue, notes].map(H.uri))
        try harness.ping()
        XCTAssertTrue(daemon.isRunning)
    }
}
