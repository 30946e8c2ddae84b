import Foundation
import TestSupport
import TonearmClient
import XCTest

/// tonearmd's allocator settings (`G_SLICE=always-malloc`, glibc's per-thread cache off) exist only
/// as environment variables read while a program is loaded, so they are set where it is started
/// (issue 27): by the systemd unit, through which D-Bus activation starts it, and by `tonearm
/// daemon` (and so `make run`). tonearmd itself never executes itself again for them.
final class AllocatorSettingsTests: CLITestCase {
    /// Starts `tonearm daemon` with `changes` to the environment; returns it once it owns its name.
    private func daemon(_ changes: [String: String?]) throws -> Spawned {
        let name = "org.mpris.MediaPlayer2.tonearm.alloc"
        let daemon = try harness.spawn(["daemon", "--audio-sink", "fakesink sync=true", "--instance", "alloc"], environment: changes)
        let wait = try Tool.run("gdbus", ["wait", "--address", harness.bus.address, "--timeout", "20", name], timeout: 30)
        XCTAssertEqual(wait.status, 0, "tonearm daemon took \(name): \(wait.stderr)")
        return daemon
    }

    func testTonearmDaemonStartsTonearmdWithTheSettingsAndTheRestOfTheEnvironment() throws {
        let daemon = try daemon(["G_SLICE": nil, "GLIBC_TUNABLES": nil, "TONEARM_TEST_MARK": "kept"])
        defer { daemon.kill() }
        let variables = try ProcessTree.environment(of: daemon.process.processIdentifier)
        XCTAssertEqual(variables["G_SLICE"], "always-malloc")
        XCTAssertEqual(variables["GLIBC_TUNABLES"], "glibc.malloc.tcache_count=0")
        XCTAssertEqual(variables["TONEARM_TEST_MARK"], "kept")
        XCTAssertEqual(variables["DBUS_SESSION_BUS_ADDRESS"], harness.bus.address)
        XCTAssertEqual(try String(contentsOfFile: "/proc/\(daemon.process.processIdentifier)/comm", encoding: .utf8), "tonearmd\n")
    }

    func testSettingsTheUserGaveStand() throws {
        // an empty G_SLICE is GLib's default slice allocator, asked for
        let daemon = try daemon(["G_SLICE": "", "GLIBC_TUNABLES": "glibc.malloc.tcache_count=3"])
        defer { daemon.kill() }
        let variables = try ProcessTree.environment(of: daemon.process.processIdentifier)
        XCTAssertEqual(variables["G_SLICE"], "")
        XCTAssertEqual(variables["GLIBC_TUNABLES"], "glibc.malloc.tcache_count=3")
    }

    /// The unit's `Environment=` and `tonearm daemon`'s settings are one list kept in two places.
    func testTheSystemdUnitSetsTheSameSettings() throws {
        let unit = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("packaging/tonearmd.service")
        let lines = try String(contentsOf: unit, encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("Environment=") }
        var variables: [String: String] = [:]
        for line in lines {
            for word in line.dropFirst("Environment=".count).split(separator: " ") {
                let parts = word.split(separator: "=", maxSplits: 1)
                variables[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
            }
        }
        XCTAssertEqual(variables, Dictionary(uniqueKeysWithValues: ServiceExecutable.allocatorEnvironment.map { ($0.key, $0.value) }))
    }
}
