import Basics
import Foundation
import XCTest

/// `Environment.variables()` against Foundation's `ProcessInfo.processInfo.environment`, which it
/// stands in for at tonearmd's start.
final class EnvironmentTests: XCTestCase {
    func testTheVariablesAreFoundationsAndFollowSetenv() {
        setenv("TONEARM_ENVIRONMENT_TEST", "a=b c=ü", 1)
        defer { unsetenv("TONEARM_ENVIRONMENT_TEST") }
        let variables = Environment.variables()
        XCTAssertEqual(variables["TONEARM_ENVIRONMENT_TEST"], "a=b c=ü")
        XCTAssertEqual(variables, ProcessInfo.processInfo.environment)
        unsetenv("TONEARM_ENVIRONMENT_TEST")
        XCTAssertNil(Environment.variables()["TONEARM_ENVIRONMENT_TEST"])
    }
}
