import Foundation
import TestSupport
import XCTest

/// tonearmd started directly runs as it was started (issue 27): it does not execute itself again
/// to change its allocator settings, which whoever starts it sets (the systemd unit, `tonearm
/// daemon`; CLITests.AllocatorSettingsTests).
final class AllocatorSettingsTests: ServiceTestCase {
    func testTonearmdStartedDirectlyIsLoadedOnceAsStarted() throws {
        // env(1) execs tonearmd, so the pid stays
        let daemon = try harness.start(launcher: ["/usr/bin/env", "-u", "G_SLICE", "-u", "GLIBC_TUNABLES"])
        let environ = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(daemon.pid)/environ"))
        let names = environ.split(separator: 0).map { String(decoding: $0.prefix { $0 != UInt8(ascii: "=") }, as: UTF8.self) }
        XCTAssertFalse(names.contains("G_SLICE"), "no setting added by a second load: \(names)")
        XCTAssertFalse(names.contains("GLIBC_TUNABLES"), "\(names)")
        // the started process owns the name under its own name
        let owner = try Tool.busctl(harness.bus, ["--json=short", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                  "org.freedesktop.DBus", "GetConnectionUnixProcessID", "s", daemon.busName])
        let pid = try XCTUnwrap(((try Tool.json(owner) as? [String: Any])?["data"] as? [Any])?.first as? Int, owner)
        XCTAssertEqual(Int32(pid), daemon.pid)
        XCTAssertEqual(try String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8), "tonearmd\n")
        XCTAssertEqual(try harness.playerctl("status"), "Stopped", "it answers")
    }
}
