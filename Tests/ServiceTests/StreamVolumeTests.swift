import Foundation
import TestSupport
import XCTest

/// Tonearm's slider in the desktop's sound settings: the stream's own volume and mute at the sound
/// server (`pactl set-sink-input-volume`, what GNOME Settings and pavucontrol do). `Volume` and
/// `Muted` follow it, announced as MPRIS clients expect; tonearmd's own settings are announced once,
/// not again as the server reports them back.
extension SoundServerTests {
    /// The one stream tonearmd plays, as the server numbers it.
    func tonearmStream() throws -> String {
        let indexes = try server.streamIndexes()
        guard indexes.count == 1 else { throw TestError("one stream expected on the server: \(indexes)") }
        return String(indexes[0])
    }

    /// The volume of tonearmd's stream at the server, in its percent (of its cubic scale).
    func streamPercent() throws -> Int {
        let inputs = try server.pactl(["list", "sink-inputs"])
        guard let line = inputs.split(separator: "\n").first(where: { $0.contains("Volume: ") }),
              let field = line.split(separator: "/").dropFirst().first,
              let percent = Int(field.trimmingCharacters(in: .whitespaces).dropLast()) else {
            throw TestError("no volume in \(inputs)")
        }
        return percent
    }

    /// The PropertiesChanged of the player's Volume since `mark`.
    func volumeAnnouncements(from mark: Int) -> [Double] {
        harness.propertiesChanged(H.player, from: mark).compactMap { $0.changed["Volume"]?.double }
    }

    func checkTheDesktopsSliderMovesVolumeAndMuteAndOurOwnSettingsAreAnnouncedOnce() throws {
        try startPlaying([try short("long", seconds: 30)])
        let stream = try tonearmStream()

        // a linear factor: Volume is the stream's linear amplitude
        var mark = harness.mark()
        try server.pactl(["set-sink-input-volume", stream, "0.5"])
        var changed = try harness.waitForChange(H.player, "Volume 0.5 from the server", from: mark) { $0["Volume"] != nil }
        XCTAssertEqual(changed.changed["Volume"]?.double ?? 0, 0.5, accuracy: 0.001)
        XCTAssertEqual(try harness.get(H.player, "Volume").double ?? 0, 0.5, accuracy: 0.001)
        // a slider's 50%: the server's volume scale is cubic, so that is 0.125 of the amplitude
        mark = harness.mark()
        try server.pactl(["set-sink-input-volume", stream, "50%"])
        changed = try harness.waitForChange(H.player, "Volume from the server's 50%", from: mark) { $0["Volume"] != nil }
        XCTAssertEqual(changed.changed["Volume"]?.double ?? 0, 0.125, accuracy: 0.001)
        Thread.sleep(forTimeInterval: 0.5)  // a window for an echo to come
        XCTAssertEqual(volumeAnnouncements(from: mark).count, 1, "announced once: \(volumeAnnouncements(from: mark))")

        // back up past 100%: taken as 1, and the stream is set back to it
        mark = harness.mark()
        try server.pactl(["set-sink-input-volume", stream, "1.5"])
        changed = try harness.waitForChange(H.player, "Volume 1 from the server's 150%", from: mark) { $0["Volume"] != nil }
        XCTAssertEqual(changed.changed["Volume"]?.double, 1)
        try readUntil("the stream set back to 100%", timeout: 5) { try server.pactl(["list", "sink-inputs"]).contains("/ 100% /") }

        // muted there and unmuted: the extension's Muted follows, and what is heard
        let capture = try server.capture("speakers")
        defer { capture.stop() }
        mark = harness.mark()
        try server.pactl(["set-sink-input-mute", stream, "1"])
        try harness.waitForChange(H.extensionInterface, "Muted from the server", from: mark) { $0["Muted"]?.bool == true }
        XCTAssertEqual(try harness.get(H.extensionInterface, "Muted").bool, true)
        mark = harness.mark()
        try server.pactl(["set-sink-input-mute", stream, "0"])
        try harness.waitForChange(H.extensionInterface, "unmuted from the server", from: mark) { $0["Muted"]?.bool == false }
        try waitForTone(capture, after: .now, "unmuted at the server")

        // our own setting: announced once, not again when the server tells it back
        mark = harness.mark()
        try harness.set(H.player, "Volume", "d", "0.8")
        try harness.waitForChange(H.player, "Volume 0.8", from: mark) { $0["Volume"]?.double == 0.8 }
        Thread.sleep(forTimeInterval: 0.5)  // a window for an echo to come
        XCTAssertEqual(volumeAnnouncements(from: mark), [0.8], "announced once")
        // the server has it: 0.8 of the amplitude is 93% on its cubic scale
        let inputs = try server.pactl(["list", "sink-inputs"])
        XCTAssertTrue(inputs.contains("/  93% /"), inputs)

        // and it is kept as any Volume is: a restart comes back at the server's last level
        try server.pactl(["set-sink-input-volume", stream, "0.25"])
        try readUntil("Volume 0.25 from the server", timeout: 5) { abs((try harness.get(H.player, "Volume").double ?? 0) - 0.25) < 0.001 }
        let old = harness.daemon
        harness.exitExpected.insert(old.pid)
        old.stop()
        try harness.start([], sink: nil, environment: server.environment)
        XCTAssertEqual(try harness.get(H.player, "Volume").double ?? 0, 0.25, accuracy: 0.001, "kept across a restart")
    }

    /// During the sleep timer's fade the fade owns the stream's volume: the slider moved then is
    /// not taken as Volume, and the fade goes on to silence at its deadline.
    func checkTheDesktopsSliderDuringTheSleepFadeDoesNotFightTheFade() throws {
        try startPlaying([try short("long", seconds: 30)])
        let stream = try tonearmStream()
        let mark = harness.mark()
        try harness.call(H.extensionInterface, "SetSleepTimer", "x", ["3000000"])
        Thread.sleep(forTimeInterval: 1)  // a third into the fade
        // the fade has the stream at (2/3)² = 0.44 of Volume now, 76% on the server's cubic scale
        try server.pactl(["set-sink-input-volume", stream, "0.6"])
        // the fade's next steps set it lower again (0.6 is 84%)
        try readUntil("the fade over the slider", timeout: 1) { try streamPercent() < 76 }
        try harness.waitForStatus("Paused", timeout: 6)
        XCTAssertEqual(volumeAnnouncements(from: mark), [], "Volume untouched by the fade and by the slider during it")
        XCTAssertEqual(try harness.get(H.player, "Volume").double, 1)
    }

}
