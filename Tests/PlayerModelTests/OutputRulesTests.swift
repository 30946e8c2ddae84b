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
        XCTAssertFalse(machine.setOutput("dac"), "nothing listed yet")
        XCTAssertTrue(machine.setOutput("default"))
        XCTAssertEqual(outputCommands(machine.takeActions()), [], "default already")

        machine.handle(.outputs(devices), of: Generation(0), at: .now)
        XCTAssertEqual(outputEvents(machine.takeActions()), [Outputs(chosen: "default", devices: devices)])
        XCTAssertTrue(machine.setOutput("dac"))
        let actions = machine.takeActions()
        XCTAssertEqual(outputCommands(actions), ["dac"])
        XCTAssertEqual(outputEvents(actions).map(\.chosen), ["dac"])

        // unplugged: still chosen (the engine plays on the default meanwhile), nothing sent again
        machine.handle(.outputs(Array(devices.prefix(1))), of: Generation(7), at: .now)
        let unplugged = machine.takeActions()
        XCTAssertEqual(outputCommands(unplugged), [])
        XCTAssertEqual(outputEvents(unplugged), [Outputs(chosen: "dac", devices: Array(devices.prefix(1)))])
        XCTAssertFalse(machine.setOutput("nowhere"))
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
}
