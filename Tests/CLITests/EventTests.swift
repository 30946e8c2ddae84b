import DBus
import TonearmClient
import XCTest

/// How `watch` turns property values into events (TonearmClient's PlayerStatus.events(since:)), on
/// values as a service sends them, without a service.
final class EventTests: XCTestCase {
    func status(_ player: [String: DBusValue] = [:], _ extensionProperties: [String: DBusValue] = [:]) throws -> PlayerStatus {
        let basePlayer: [String: DBusValue] = [
            "PlaybackStatus": .string("Playing"), "Position": .int64(0), "Volume": .double(1), "LoopStatus": .string("None"),
            "Shuffle": .bool(false), "Rate": .double(1),
            "Metadata": .vardict(["mpris:trackid": .objectPath("/io/github/tonearm/Track/1"), "xesam:title": .string("One")]),
        ]
        let baseExtension: [String: DBusValue] = [
            "Muted": .bool(false), "BufferingPercent": .int32(100), "WaitingReason": .string(""),
            "ItemError": .structure([.string(""), .string("")]),
        ]
        return try PlayerStatus(player: basePlayer.merging(player) { $1 }, extension: baseExtension.merging(extensionProperties) { $1 })
    }

    func testEachChangeIsOneKindAndARepeatIsNone() throws {
        let playing = try status()
        XCTAssertEqual(try status().events(since: playing), [], "the same values: nothing happened")
        XCTAssertEqual(try status(["Position": .int64(5_000_000)]).events(since: playing), [], "the position moves by itself")
        XCTAssertEqual(try status(["PlaybackStatus": .string("Paused")]).events(since: playing), [.state])
        XCTAssertEqual(try status([:], ["BufferingPercent": .int32(40)]).events(since: playing), [.buffering])
        XCTAssertEqual(try status([:], ["WaitingReason": .string("buffering")]).events(since: playing), [.buffering])
        XCTAssertEqual(try status(["Volume": .double(0.5)]).events(since: playing), [.volume])
        XCTAssertEqual(try status([:], ["Muted": .bool(true)]).events(since: playing), [.volume])
        XCTAssertEqual(try status(["Shuffle": .bool(true)]).events(since: playing), [.options])
        let failed = try status([:], ["ItemError": .structure([.string("io.github.tonearm.Error.Decode"), .string("cannot decode")])])
        XCTAssertEqual(failed.events(since: playing), [.error])
        XCTAssertEqual(playing.events(since: failed), [], "an error going away is no error event")
    }

    func testATrackChangeComesBeforeTheStateItBringsAlong() throws {
        let playing = try status()
        let next = try status([
            "PlaybackStatus": .string("Paused"),
            "Metadata": .vardict(["mpris:trackid": .objectPath("/io/github/tonearm/Track/2")]),
        ])
        XCTAssertEqual(next.events(since: playing), [.track, .state])
        XCTAssertEqual(try status(["Metadata": .vardict([:])]).events(since: playing), [.track],
                       "no current track any more")
    }
}
