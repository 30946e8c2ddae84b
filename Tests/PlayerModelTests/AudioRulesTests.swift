import Foundation
import PlayerModel
import TestSupport
import XCTest

/// ReplayGain's modes and the equalizer's presets, as the machine tells the engine.
final class AudioRulesTests: XCTestCase {
    let t0 = ContinuousClock.now
    let uris = ["a1", "a2", "b1", "a3"].map { MediaURI(fileURL: URL(fileURLWithPath: "/music/\($0).flac")) }

    func audioCommands(_ actions: [PlayerAction]) -> [AudioCommand] {
        actions.compactMap { if case .engine(.audio(let command)) = $0 { command } else { nil } }
    }

    func tagged(_ machine: inout PlayerMachine, _ id: ItemID, album: String, artist: String = "Band") {
        var metadata = Metadata()
        metadata.album = album
        metadata.albumArtists = [artist]
        machine.metadataRead(id, .success(DiscoveredMedia(metadata: metadata, duration: .seconds(60), isSeekable: true, isLive: false)))
    }

    /// A queue A1 A2 B1 A3 (A3 of album A, but not next to it), the first playing and prerolled.
    func albumQueue(artists: [String] = ["Band", "Band", "Band", "Band"]) throws -> (PlayerMachine, [ItemID], Generation) {
        var machine = PlayerMachine()
        let ids = try machine.enqueue(uris, at: .end)
        for (index, album) in ["A", "A", "B", "A"].enumerated() { tagged(&machine, ids[index], album: album, artist: artists[index]) }
        machine.play()
        let generation = try XCTUnwrap(machine.takeActions().compactMap { action -> Generation? in
            if case .engine(.load(_, let generation)) = action { generation } else { nil }
        }.first)
        machine.handle(.asyncDone(EngineSnapshot(position: PositionSample(.zero, at: t0), duration: .seconds(60), isSeekable: true,
                                                 loadedRanges: [])), of: generation, at: t0)
        _ = machine.takeActions()
        return (machine, ids, generation)
    }

    func testOffTellsTheEngineNothingAndTrackAndAlbumAreWhatTheySay() throws {
        var (machine, _, _) = try albumQueue()
        XCTAssertEqual(audioCommands(machine.takeActions()), [], "off: no stage")
        machine.setReplayGainMode(.track)
        XCTAssertEqual(audioCommands(machine.takeActions()), [.replayGain(albumMode: false, preamp: 0), .nextAlbumMode(false)])
        machine.setReplayGainMode(.album)
        machine.setReplayGainPreamp(4.5)
        XCTAssertEqual(audioCommands(machine.takeActions()), [.replayGain(albumMode: true, preamp: 4.5), .nextAlbumMode(true)])
        machine.setReplayGainMode(.off)
        XCTAssertEqual(audioCommands(machine.takeActions()), [.replayGainOff])
        XCTAssertEqual(machine.audioSettings.preamp, 4.5, "the pre-amp stays for next time")
    }

    /// Auto: album gain while the queue plays an album in its order, track gain for a track
    /// between other albums' and whenever the queue is shuffled.
    func testAutoTakesTheAlbumGainForTracksOfOneAlbumInQueueOrder() throws {
        var (machine, ids, _) = try albumQueue()
        machine.setReplayGainMode(.auto)
        XCTAssertEqual(audioCommands(machine.takeActions()), [.replayGain(albumMode: true, preamp: 0), .nextAlbumMode(true)],
                       "A1 and the A2 after it: album")
        try machine.jump(to: ids[2])
        XCTAssertEqual(audioCommands(machine.takeActions()).first, .replayGain(albumMode: false, preamp: 0),
                       "B1 alone between A tracks: track")
        try machine.jump(to: ids[3])
        XCTAssertFalse(audioCommands(machine.takeActions()).contains(.replayGain(albumMode: true, preamp: 0)),
                       "A3 after B1: not in its album's order, track as B1 was")
        try machine.jump(to: ids[1])
        XCTAssertEqual(audioCommands(machine.takeActions()).first, .replayGain(albumMode: true, preamp: 0))
        machine.setShuffle(true)
        XCTAssertEqual(audioCommands(machine.takeActions()).first, .replayGain(albumMode: false, preamp: 0), "shuffled: track")
    }

    func testTheSameAlbumTitleByAnotherArtistIsAnotherAlbum() throws {
        var (machine, _, _) = try albumQueue(artists: ["Band", "Someone else", "Band", "Band"])
        machine.setReplayGainMode(.auto)
        XCTAssertEqual(audioCommands(machine.takeActions()).first, .replayGain(albumMode: false, preamp: 0))
    }

    func testPresetsSetTheGainsAndGainsNameTheirPreset() throws {
        var machine = PlayerMachine()
        XCTAssertTrue(machine.selectEqualizerPreset("rock"))
        let rock = try XCTUnwrap(Equalizer.builtIn.first { $0.name == "rock" }).gains
        XCTAssertEqual(audioCommands(machine.takeActions()), [.equalizer(rock)])
        XCTAssertEqual(machine.audioSettings.equalizerPreset, "rock")
        var custom = rock
        custom[0] = -7
        machine.setEqualizer(custom)
        XCTAssertEqual(machine.audioSettings.equalizerPreset, "", "gains of no preset")
        machine.saveEqualizerPreset("mine")
        XCTAssertEqual(machine.audioSettings.equalizerPreset, "mine")
        XCTAssertEqual(machine.audioSettings.presetNames.suffix(1), ["mine"])
        XCTAssertTrue(machine.selectEqualizerPreset("flat"))
        XCTAssertEqual(audioCommands(machine.takeActions()).last, .equalizer(Equalizer.flat))
        machine.setEqualizer(custom)
        XCTAssertEqual(machine.audioSettings.equalizerPreset, "mine", "its gains are the user's preset")
        XCTAssertFalse(machine.selectEqualizerPreset("nonesuch"))
        XCTAssertTrue(machine.deleteEqualizerPreset("mine"))
        XCTAssertEqual(machine.audioSettings.equalizerPreset, "")
        XCTAssertEqual(machine.audioSettings.equalizer, custom, "the gains stay")
        XCTAssertFalse(machine.deleteEqualizerPreset("rock"), "a built-in preset is not the user's to delete")
        XCTAssertFalse(Equalizer.isValidName("rock"))
        XCTAssertFalse(Equalizer.isValid([0, 0, 0]))
        XCTAssertFalse(Equalizer.isValid(Equalizer.flat.dropLast() + [12.5]))
        XCTAssertFalse(Equalizer.isValid(Equalizer.flat.dropLast() + [.nan]))
    }

    func testARestoreTellsTheEngineTheSavedEqualizer() throws {
        var machine = PlayerMachine()
        var saved = SavedState(items: [SavedState.Entry(id: ItemID(1), uri: uris[0])], settings: SavedSettings(currentID: ItemID(1)), nextID: 2)
        saved.settings.audio = AudioSettings(replayGain: .album, preamp: 2, equalizer: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
                                             equalizerPreset: "mine", userPresets: [EqualizerPreset(name: "mine", gains: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])])
        machine.restore(saved, resume: .pause)
        let actions = machine.takeActions()
        XCTAssertTrue(audioCommands(actions).contains(.equalizer([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])))
        XCTAssertTrue(audioCommands(actions).contains(.replayGain(albumMode: true, preamp: 2)))
        XCTAssertEqual(machine.audioSettings, saved.settings.audio)
    }
}
