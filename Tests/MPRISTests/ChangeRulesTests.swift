import DBus
@testable import MPRIS
import XCTest

/// Change rules name properties of their interface's table; the real rules are held against the
/// real tables by InterfaceTableTests (tableDifferences).
final class ChangeRulesTests: XCTestCase {
    let table = InterfaceDescription(name: "io.github.tonearm.Test1", properties: [
        .typed("CanGoNext", get: { true }), .typed("Volume", get: { 0.5 }),
    ])

    func testAMisspeltNameIsFound() {
        let rules = ChangeRules("io.github.tonearm.Test1", [
            .queueChanged: .only(["CanGoNext", "CanGoNxt"]), .volumeChanged: .only(["Volume"]), .rateChanged: .all,
        ])
        XCTAssertEqual(rules.unknownNames(in: [table]), ["io.github.tonearm.Test1.CanGoNxt"])
        XCTAssertEqual(ChangeRules("io.github.tonearm.Test1", [.volumeChanged: .only(["Volume"])]).unknownNames(in: [table]), [])
    }

    func testRulesForAnInterfaceWithNoTableAreFound() {
        XCTAssertEqual(ChangeRules("io.github.tonearm.Missing", [.rateChanged: .all]).unknownNames(in: [table]), ["io.github.tonearm.Missing"])
    }

    func testEveryRuleIsForAnInterfaceOfTheService() {
        XCTAssertEqual(Set(MPRISService.changeRules.map(\.interface)), [MPRIS.root, MPRIS.player, MPRIS.tonearm])
    }
}
