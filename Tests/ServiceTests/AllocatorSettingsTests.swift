import Foundation
import TestSupport
import XCTest

/// tonearmd runs with `G_SLICE=always-malloc` and glibc's per-thread cache off
/// (`GLIBC_TUNABLES=glibc.malloc.tcache_count=0`), which exist only as environment variables read
/// while a program is loaded: when they are missing it executes itself again with them
/// (Sources/CProcessStart/process_start.c). What a user and systemd see must not change: the same
/// pid owns the name (Type=dbus, `tonearm daemon`), the process keeps its name for ps and pgrep,
/// and the rest of its environment stays. A value the user set stands. (What the settings save is
/// make fuzz's memory check.)
final class AllocatorSettingsTests: ServiceTestCase {
    private func environment(of pid: Int32) throws -> [String: String] {
        let data = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
        var variables: [String: String] = [:]
        for entry in data.split(separator: 0) {
            let text = String(decoding: entry, as: UTF8.self)
            guard let equals = text.firstIndex(of: "=") else { continue }
            variables[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        return variables
    }

    private func assertSameProcessOwnsTheName(_ daemon: Daemon, file: StaticString = #filePath, line: UInt = #line) throws {
        let owner = try Tool.busctl(harness.bus, ["--json=short", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                  "org.freedesktop.DBus", "GetConnectionUnixProcessID", "s", daemon.busName])
        let pid = try XCTUnwrap(((try Tool.json(owner) as? [String: Any])?["data"] as? [Any])?.first as? Int, owner)
        XCTAssertEqual(Int32(pid), daemon.pid, "the process started owns the name", file: file, line: line)
        XCTAssertEqual(try String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8), "tonearmd\n", file: file, line: line)
    }

    func testMissingSettingsAreAddedAndTheRestOfTheEnvironmentKept() throws {
        // env(1) execs tonearmd, so the pid stays: G_SLICE unset, another tunable set, a marker
        let daemon = try harness.start(launcher: ["/usr/bin/env", "-u", "G_SLICE",
                                                  "GLIBC_TUNABLES=glibc.malloc.top_pad=131072", "TONEARM_TEST_MARK=kept"])
        let variables = try environment(of: daemon.pid)
        XCTAssertEqual(variables["G_SLICE"], "always-malloc")
        // the user's tunable first, then ours. The dynamic loader ends each tunable's value with a
        // NUL in the process's own copy of the string as it parses it (glibc 2.36
        // elf/dl-tunables.c, parse_tunables), which is what /proc/PID/environ shows: the second
        // tunable reads as an entry of its own there.
        XCTAssertEqual(variables["GLIBC_TUNABLES"], "glibc.malloc.top_pad=131072")
        XCTAssertEqual(variables["glibc.malloc.tcache_count"], "0")
        XCTAssertEqual(variables["TONEARM_TEST_MARK"], "kept")
        XCTAssertEqual(variables["DBUS_SESSION_BUS_ADDRESS"], harness.bus.address)
        try assertSameProcessOwnsTheName(daemon)
        XCTAssertEqual(try harness.playerctl("status"), "Stopped", "it answers")
    }

    func testSettingsTheUserGaveStand() throws {
        // an empty G_SLICE is GLib's default slice allocator, asked for
        let daemon = try harness.start(environment: ["G_SLICE": "", "GLIBC_TUNABLES": "glibc.malloc.tcache_count=3"])
        let variables = try environment(of: daemon.pid)
        XCTAssertEqual(variables["G_SLICE"], "")
        XCTAssertEqual(variables["GLIBC_TUNABLES"], "glibc.malloc.tcache_count=3")
        try assertSameProcessOwnsTheName(daemon)
        XCTAssertFalse(daemon.output.contains("running with the allocators' defaults"), daemon.output)
    }
}
