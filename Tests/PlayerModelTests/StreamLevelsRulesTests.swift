import PlayerModel
import XCTest

/// The stream's levels changed at the sound server (a desktop's slider): taken as Volume and
/// Muted unless a fade had the stream, clamped to 1, and never sent back when already there.
final class StreamLevelsRulesTests: XCTestCase {
    func volumeEvents(_ actions: [PlayerAction]) -> [[Double]] {
        actions.compactMap { if case .emit(.volumeChanged(let volume, let muted)) = $0 { [volume, muted ? 1 : 0] } else { nil } }
    }

    func engineLevels(_ actions: [PlayerAction]) -> [EngineCommand] {
        actions.compactMap {
            guard case .engine(let command) = $0 else { return nil }
            switch command {
            case .setVolume, .setMuted: return command
            default: return nil
            }
        }
    }

    func testTheServersLevelsBecomeVolumeAndMutedButNotDuringAFade() {
        var machine = PlayerMachine()
        machine.handle(.streamLevels(volume: 0.5, muted: false, fading: false), of: Generation(3), at: .now)
        var actions = machine.takeActions()
        XCTAssertEqual(volumeEvents(actions), [[0.5, 0]], "announced once, whatever the generation")
        XCTAssertEqual(engineLevels(actions), [.setVolume(0.5)], "every stream of the engine gets it")

        machine.handle(.streamLevels(volume: 0.2, muted: true, fading: true), of: Generation(3), at: .now)
        actions = machine.takeActions()
        XCTAssertEqual(volumeEvents(actions), [[0.5, 1]], "during a fade only the mute is taken")
        XCTAssertEqual(engineLevels(actions), [.setMuted(true)])

        machine.handle(.streamLevels(volume: 1.5, muted: true, fading: false), of: Generation(3), at: .now)
        actions = machine.takeActions()
        XCTAssertEqual(volumeEvents(actions), [[1, 1]], "past 100% is 1")
        XCTAssertEqual(engineLevels(actions), [.setVolume(1)])
        machine.handle(.streamLevels(volume: 1.5, muted: true, fading: false), of: Generation(3), at: .now)
        actions = machine.takeActions()
        XCTAssertEqual(volumeEvents(actions), [], "Volume is 1 already")
        XCTAssertEqual(engineLevels(actions), [.setVolume(1)], "the stream is set back to 1")

        machine.handle(.streamLevels(volume: .nan, muted: false, fading: false), of: Generation(3), at: .now)
        XCTAssertEqual(volumeEvents(machine.takeActions()), [[1, 0]], "a volume that is no number is not taken")
    }
}
