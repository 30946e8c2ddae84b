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

    /// ReplayGain is heard, but the stream's volume at the server stays what the desktop's slider
    /// shows and `Volume` reads: a track tagged -6 dB at Volume 1 is heard 6 dB down with its stream
    /// at 100%; Volume 0.5 then puts the stream at 0.5 (79% of the server's cubic scale) and the
    /// sound 12 dB down, ReplayGain and the volume set at once, as one gain.
    func checkReplayGainIsHeardButIsNeverTheStreamsVolume() throws {
        var tags = MediaGenerator.Tags()
        tags.extra = ["replaygain-track-gain=-6.0"]
        try startPlaying([try media.tone("tagged-minus-6", format: .flac, seconds: 30, tags: tags)])
        let capture = try server.capture("speakers")
        defer { capture.stop() }
        try waitForTone(capture, "ReplayGain off: the tone as it is")

        var asked = ContinuousClock.now
        try harness.set(H.extensionInterface, "ReplayGainMode", "s", "track")
        try waitForTone(capture, after: asked, offset: -6, "ReplayGain track: 6 dB down")
        XCTAssertEqual(try streamPercent(), 100, "the stream's volume is not ReplayGain's")
        XCTAssertEqual(try harness.get(H.player, "Volume").double ?? 0, 1, accuracy: 0.001)

        asked = .now
        try harness.set(H.player, "Volume", "d", "0.5")
        try waitForTone(capture, after: asked, offset: -6 + 20 * log10(0.5), "ReplayGain and Volume 0.5: 12 dB down")
        XCTAssertEqual(try streamPercent(), 79, "the stream carries the volume alone")
        XCTAssertEqual(try harness.get(H.player, "Volume").double ?? 0, 0.5, accuracy: 0.001)
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

    /// What `Volume` and `Muted` read and what the server has for tonearmd's stream (its volume
    /// linear: `pactl` prints the raw pa_volume_t, a cubic scale) after running `action`, and again
    /// 50 ms later, all in one shell: Foundation's `Process.waitUntilExit` on Linux polls every
    /// 50 ms, and a hundred cycles of separate runs would take minutes.
    func levelsEverywhere(after action: String = ":")
        throws -> [(volume: Double, muted: Bool, atServer: StreamLevels)] {
        let busctl = "busctl --address='\(harness.bus.address)' get-property \(harness.busName) \(H.path)"
        let read = "echo ==; \(busctl) \(H.player) Volume && \(busctl) \(H.extensionInterface) Muted && pactl list sink-inputs"
        let output = try Processes.run(["sh", "-c", "\(action) && \(read) && sleep 0.05 && \(read)"],
                                       environment: server.environment, timeout: 10)
        return try output.components(separatedBy: "==\n").dropFirst().map { block in
            let lines = block.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let volume = lines.first(where: { $0.hasPrefix("d ") }).flatMap({ Double($0.dropFirst(2)) }),
                  let muted = lines.first(where: { $0.hasPrefix("b ") }).map({ $0 == "b true" }),
                  let volumeLine = lines.first(where: { $0.hasPrefix("Volume: ") }),
                  let raw = volumeLine.split(separator: ":").dropFirst(2).first?.split(separator: "/").first
                    .flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) }),
                  let muteLine = lines.first(where: { $0.hasPrefix("Mute: ") }) else {
                throw TestError("Volume, Muted and the stream's levels not all in \(output)")
            }
            let cubic = raw / 65536
            return (volume, muted, StreamLevels(volume: cubic * cubic * cubic, muted: muteLine.hasSuffix("yes")))
        }
    }

    struct StreamLevels: CustomStringConvertible {
        var volume: Double
        var muted: Bool
        var description: String { "\(volume)\(muted ? " muted" : "")" }
    }

    /// A hundred cycles of a client's `Volume` or `Muted` set over D-Bus and the desktop's slider
    /// (`pactl`) moving the stream's volume or its mute, while playing (issue 37: a set undone about
    /// 5 ms later by the server's report of the old level, in about 3 of 20 tries on PipeWire; the
    /// slider's unmute right after our mute missed now and then). After each step, once settled
    /// and again 50 ms later: `Volume` and `Muted` read what was set last, by whoever set it, and
    /// the stream at the server (what is heard) has the same.
    func checkAHundredSetsAndSliderMovesAreNeitherUndoneNorMissed() throws {
        try startPlaying([try short("long", seconds: 30)])
        try harness.set(H.player, "LoopStatus", "s", "Track")  // one stream throughout: the track loops gaplessly
        let stream = try tonearmStream()
        let set = "busctl --address='\(harness.bus.address)' set-property \(harness.busName) \(H.path)"
        var expected = (volume: 1.0, muted: false)
        var random = SplitMix(seed: 37)
        let started = ContinuousClock.now
        var reads = 0

        /// Runs `action`, then reads both sides until they agree with `expected` (at most 3 s),
        /// and checks them again 50 ms after that: an echo that undoes the step comes within that.
        func step(_ what: String, _ action: String) throws {
            var read = try levelsEverywhere(after: action)
            let deadline = ContinuousClock.now + .seconds(3)
            while true {
                reads += 1
                let first = read[0]
                let agrees = abs(first.volume - expected.volume) < 0.002 && first.muted == expected.muted
                    && abs(first.atServer.volume - expected.volume) < 0.002 && first.atServer.muted == expected.muted
                if agrees { break }
                guard ContinuousClock.now < deadline else {
                    throw TestError("\(what): expected \(expected), read Volume \(first.volume), Muted \(first.muted), the server \(first.atServer)")
                }
                read = try levelsEverywhere()
            }
            let later = read[1]
            XCTAssertEqual(later.volume, expected.volume, accuracy: 0.002, "\(what): Volume undone (the server has \(later.atServer))")
            XCTAssertEqual(later.muted, expected.muted, "\(what): Muted undone (the server has \(later.atServer))")
            XCTAssertEqual(later.atServer.volume, expected.volume, accuracy: 0.002, "\(what): the stream's volume at the server")
            XCTAssertEqual(later.atServer.muted, expected.muted, "\(what): the stream's mute at the server")
        }

        for cycle in 0..<100 {
            // a client's setting: Volume on even cycles, Muted on odd ones
            if cycle % 2 == 0 {
                expected.volume = Double(10 + random.next() % 86) / 100
                try step("cycle \(cycle): Volume \(expected.volume) set", "\(set) \(H.player) Volume d \(expected.volume)")
            } else {
                expected.muted.toggle()
                try step("cycle \(cycle): Muted \(expected.muted) set", "\(set) \(H.extensionInterface) Muted b \(expected.muted)")
            }
            // the desktop's slider: its volume on even cycles, its mute on odd ones, right after
            // our Muted set (issue 37: on PipeWire 0.3.65 the stream read at our mute's report is
            // now and then the one from before it, and the slider's unmute after it went unheard)
            if cycle % 2 == 0 {
                expected.volume = Double(10 + random.next() % 86) / 100
                try step("cycle \(cycle): the slider at \(expected.volume)", "pactl set-sink-input-volume \(stream) \(expected.volume)")
            } else {
                expected.muted.toggle()
                try step("cycle \(cycle): the slider's mute \(expected.muted)", "pactl set-sink-input-mute \(stream) \(expected.muted ? 1 : 0)")
            }
            if testRun.map({ $0.failureCount > 0 }) ?? false { break }
            if cycle % 20 == 19 { print("\(cycle + 1) cycles in \(ContinuousClock.now - started), \(reads) reads until settled") }
        }
        // how often the engine read the stream again after a report with no news (OutputLevels.rereadLater)
        let logs = harness.logs
        print("the stream read again \(logs.components(separatedBy: "the stream's levels read").count - logs.components(separatedBy: "reread=0").count) times, "
              + "\(logs.components(separatedBy: "a re-read of the stream found").count - 1) of them finding what the report missed, "
              + "\(logs.components(separatedBy: "the server's is taken").count - 1) times the server's level taken after them")
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

    /// A stream opened below Volume 1 is heard at that level from its first sample: Volume 0.5 set
    /// before anything played (no level of the stream saved at the server yet), then a track
    /// played; its first 300 ms (what pulsesink buffers) are 6 dB down, as the rest is.
    func checkAStreamOpenedAtHalfVolumeIsHeardAtItFromItsFirstSample() throws {
        try startServer()
        try harness.start([], sink: nil, environment: server.environment)
        try harness.set(H.player, "Volume", "d", "0.5")
        let capture = try server.capture("speakers")
        defer { capture.stop() }
        let play = ContinuousClock.now
        try harness.call(H.player, "OpenUri", "s", [try short("long", seconds: 30).absoluteString])
        try waitForTone(capture, after: play, offset: -6.02, "Volume 0.5")
        Thread.sleep(forTimeInterval: 0.6)  // the first 300 ms and as much again after them
        let heard = capture.samples(after: play)
        guard let first = heard.firstIndex(where: { abs($0) > 32 }) else { throw TestError("nothing heard") }
        let window = SoundServer.rate * 3 / 10 * SoundServer.channels
        let firstPart = Array(heard[first..<min(first + window, heard.count)])
        let nextPart = Array(heard[min(first + window, heard.count)..<min(first + 2 * window, heard.count)])
        print("Volume 0.5 opening: first 300 ms \(Levels.dBFS(firstPart) - Self.toneLevel) dB, next \(Levels.dBFS(nextPart) - Self.toneLevel) dB")
        XCTAssertEqual(firstPart.count, window, "300 ms heard")
        XCTAssertEqual(Levels.dBFS(firstPart) - Self.toneLevel, -6.02, accuracy: 1, "the first 300 ms are 6 dB down")
        XCTAssertEqual(Levels.dBFS(nextPart) - Self.toneLevel, -6.02, accuracy: 0.5, "and the 300 ms after them")
    }

}

/// A small seeded generator (SplitMix64), so that a failing run can be run again with the same values.
struct SplitMix {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
