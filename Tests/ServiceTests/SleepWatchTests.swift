import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Pausing while the system sleeps: logind's PrepareForSleep on the system bus, here a private
/// dbus-daemon that tonearmd finds through DBUS_SYSTEM_BUS_ADDRESS (where libdbus looks first).
final class SleepWatchTests: ServiceTestCase {
    typealias H = ServiceHarness

    /// `dbus-monitor` on `bus`, once it is a monitor (it sees its own name go), so that nothing
    /// sent after this returns is missed.
    func monitor(_ bus: PrivateBus) throws -> FollowingProcess {
        let monitor = try FollowingProcess("dbus-monitor", ["--address", bus.address], environment: [:])
        try monitor.wait(for: "dbus-monitor to become a monitor") { $0.contains("member=NameLost") }
        return monitor
    }

    /// What logind sends before the system sleeps (true) and after it woke (false).
    func prepareForSleep(_ sleeping: Bool, on bus: PrivateBus) throws {
        let output = try Tool.run("dbus-send", ["--bus=\(bus.address)", "--type=signal", "/org/freedesktop/login1",
                                               "org.freedesktop.login1.Manager.PrepareForSleep", "boolean:\(sleeping)"],
                                  timeout: 15)
        guard output.status == 0 else { throw TestError("dbus-send failed: \(output.stderr)") }
    }

    func testSleepPausesAndWakingPlaysAgain() throws {
        let system = try PrivateBus()
        defer { system.stop() }
        let monitor = try monitor(system)
        defer { monitor.stop() }
        try harness.start([try short("sleep", seconds: 30).path], environment: ["DBUS_SYSTEM_BUS_ADDRESS": system.address])
        try harness.waitForStatus("Playing")
        // tonearmd has asked the system bus for PrepareForSleep: from here on it hears it
        try monitor.wait(for: "tonearmd's AddMatch for PrepareForSleep") { $0.contains("member='PrepareForSleep'") }
        try prepareForSleep(true, on: system)
        try harness.waitForStatus("Paused")
        try prepareForSleep(false, on: system)
        try harness.waitForStatus("Playing")
    }

    /// A system bus that takes the connection and then never answers (a hung dbus-daemon): the
    /// handshake waits on it for libdbus's 25 s, which must not hold the queue that answers.
    func testASystemBusThatNeverAnswersHoldsNothing() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-hung-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("system_bus_socket").path
        let fd = try Self.listeningSocket(at: path)
        defer { close(fd) }
        let daemon = try harness.start(environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(path)"])
        try harness.ping()
        try harness.call(H.player, "OpenUri", "s", [try short("hung").absoluteString])
        try harness.waitForStatus("Playing")
        harness.exitExpected.insert(daemon.pid)
        try harness.call(H.root, "Quit")
        XCTAssertEqual(daemon.waitForExit(timeout: 10), 0, "Quit did not end tonearmd while the system bus hung")
    }

    /// A Unix socket listening at `path` that never accepts: connecting succeeds (the backlog takes
    /// it) and every read then waits.
    static func listeningSocket(at path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestError("socket failed") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw TestError("socket path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
        guard bound, listen(fd, 4) == 0 else {
            close(fd)
            throw TestError("cannot listen at \(path): errno \(errno)")
        }
        return fd
    }
}
