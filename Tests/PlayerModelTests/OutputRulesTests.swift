import Foundation
import PlayerModel
import TestSupport
import XCTest

/// The chosen output as the machine keeps it and tells the engine: only `default` or a listed
/// device can be chosen, the choice outlives its device, and a saved one comes back.
final class OutputRulesTests: XCTestCase {
    let devices = [OutputDevice(id: "speakers", description: "Speakers", kind: "pulse"),
                   OutputDevice(id: "dac", description: "USB DAC", kind: "pulse")]

    func outputCommands(_ actions: [PlayerAction]) -> [String] {
        actions.compactMap { if case .engine(.setOutput(let id)) = $0 { id } else { nil } }
    }

    func outputEvents(_ actions: [PlayerAction]) -> [Outputs] {
        actions.compactMap { if case .emit(.outputsChanged(let outputs)) = $0 { outputs } else { nil } }
    }

    func testOnlyDefaultOrAListedDeviceIsChosenAndTheChoiceOutlivesItsDevice() {
        var machine = PlayerMachine()
        XCTAssertFalse(machine.setOutput("dac", now: .now), "nothing listed yet")
        XCTAssertTrue(machine.setOutput("default", now: .now))
        XCTAssertEqual(outputCommands(machine.takeActions()), [], "default already")

        machine.handle(.outputs(devices), of: Generation(0), at: .now)
        XCTAssertEqual(outputEvents(machine.takeActions()), [Outputs(chosen: "default", devices: devices)])
        XCTAssertTrue(machine.setOutput("dac", now: .now))
        let actions = machine.takeActions()
        XCTAssertEqual(outputCommands(actions), ["dac"])
        XCTAssertEqual(outputEvents(actions).map(\.chosen), ["dac"])

        // unplugged: still chosen (the engine plays on the default meanwhile), nothing sent again
        machine.handle(.outputs(Array(devices.prefix(1))), of: Generation(7), at: .now)
        let unplugged = machine.takeActions()
        XCTAssertEqual(outputCommands(unplugged), [])
        XCTAssertEqual(outputEvents(unplugged), [Outputs(chosen: "dac", devices: Array(devices.prefix(1)))])
        XCTAssertFalse(machine.setOutput("nowhere", now: .now))
        XCTAssertEqual(machine.outputs.chosen, "dac")
    }

    func testASavedChoiceIsRestoredEvenWithItsDeviceAbsent() {
        var saved = SavedState(items: [], settings: SavedSettings(), nextID: 1)
        saved.settings.output = "dac"
        var machine = PlayerMachine()
        machine.restore(saved, resume: .pause)
        XCTAssertEqual(machine.outputs.chosen, "dac")
        XCTAssertEqual(outputCommands(machine.takeActions()), ["dac"])

        var junk = SavedState(items: [], settings: SavedSettings(), nextID: 1)
        junk.settings.output = "bad\u{7}id"
        var other = PlayerMachine()
        other.restore(junk, resume: .pause)
        XCTAssertEqual(other.outputs.chosen, "default", "a control character is no device's id")
    }

    /// A move between sound server devices leaves the pipeline playing (pulsesink moves its
    /// stream); a move to or from the snapserver loads the item again where it was, playing on.
    func testMovingToOrFromSnapcastLoadsTheItemAgainWhereItWas() throws {
        var m = StreamRulesTests.Machine(ReconnectPolicy())
        let snapcast = OutputDevice(id: "snapcast", description: "Snapcast", kind: OutputDevice.snapcastKind)
        m.send(.outputs(devices + [snapcast]))
        let uri = MediaURI(fileURL: URL(fileURLWithPath: "/music/a.flac"))
        _ = try m.machine.enqueue([uri], at: .end)
        m.machine.play()
        _ = m.take()
        m.send(.asyncDone(EngineSnapshot(position: m.sample(.zero), duration: .seconds(60), isSeekable: true, loadedRanges: [])))
        m.send(.stateChanged(.playing, pending: nil, position: m.sample(.zero)))
        m.advance(by: .seconds(12))

        XCTAssertTrue(m.machine.setOutput("dac", now: m.now))
        XCTAssertEqual(commands(m.take()), [.setOutput("dac")], "moved, not loaded again")

        let before = m.generation
        XCTAssertTrue(m.machine.setOutput("snapcast", now: m.now))
        XCTAssertEqual(commands(m.take()), [.setOutput("snapcast"), .release, .load(uri, Generation(before.rawValue + 1))])
        m.send(.asyncDone(EngineSnapshot(position: m.sample(.zero), duration: .seconds(60), isSeekable: true, loadedRanges: [])))
        XCTAssertEqual(commands(m.actions), [.seek(.position(.seconds(12)), .exact, rate: 1), .setPlaying(true)],
                       "back where it was, playing on")
        XCTAssertEqual(m.machine.outputs.chosen, "snapcast")

        XCTAssertTrue(m.machine.setOutput("default", now: m.now))
        XCTAssertTrue(commands(m.take()).contains(.release), "back to the sound server: loaded again")
    }

    func commands(_ actions: [PlayerAction]) -> [EngineCommand] {
        actions.compactMap { if case .engine(let command) = $0 { command } else { nil } }
    }
}
