import EngineLink
import Foundation
import TestSupport
import XCTest

/// What crosses a spawn (issue 39; docs/sandbox.md): the engine and the window program keep
/// stdin, stdout and stderr and no other descriptor of the process that started them (tonearmd's
/// bus socket was the engine's fds 8 and 9), see only the variables of `SpawnEnvironment`'s lists
/// (never the bus's address, never a secret of the session's), and run with no-new-privileges (the
/// window program with the engine's system-call filter too: SandboxTests). Read from /proc while
/// the item plays.
final class SpawnConfinementTests: VideoTestCase {
    /// Variables of the session's that no child needs, planted in tonearmd's environment.
    static let planted = ["SSH_AUTH_SOCK": "/tmp/planted-agent.sock", "GNOME_KEYRING_CONTROL": "/tmp/planted-keyring",
                          "AWS_SECRET_ACCESS_KEY": "planted-secret"]

    func testTheEngineKeepsOnlyItsPipesAndAMinimalEnvironment() throws {
        let tone = try short("tone", seconds: 20)
        let daemon = try harness.start(environment: Self.planted)
        try harness.call(H.player, "OpenUri", "s", [H.uri(tone)])
        try harness.waitForStatus("Playing")
        let engine = try XCTUnwrap(ProcessTree.descendants(of: daemon.pid, named: "tonearm-engine").first, "an engine plays")

        try checkDescriptors(of: engine, startedBy: [daemon.pid])
        let own = try ProcessTree.environment(of: daemon.pid)
        XCTAssertNotNil(own["DBUS_SESSION_BUS_ADDRESS"], "tonearmd has the bus's address")
        let theirs = try ProcessTree.environment(of: engine)
        XCTAssertEqual(theirs, SpawnEnvironment.forEngine(own), "the engine's environment is its list's part of tonearmd's")
        try checkEnvironment(theirs, allowed: { SpawnEnvironment.engine.allows($0) || $0 == SpawnEnvironment.userManagerBus })
        XCTAssertEqual(try ProcessTree.status(of: engine, "NoNewPrivs"), "1")
        XCTAssertEqual(try ProcessTree.status(of: daemon.pid, "NoNewPrivs"), "0", "tonearmd itself is not confined by this")
    }

    func testTheWindowProgramKeepsOnlyItsPipesAndAMinimalEnvironment() throws {
        let x = try startDisplay()
        let daemon = try harness.start(environment: Self.planted.merging(["DISPLAY": x.name]) { $1 })
        _ = try openRedSquare(on: x)
        let engine = try XCTUnwrap(ProcessTree.descendants(of: daemon.pid, named: "tonearm-engine").first, "an engine plays")
        let window = try XCTUnwrap(ProcessTree.descendants(of: engine, named: "tonearm-video").first, "the engine started the window")

        try checkDescriptors(of: window, startedBy: [engine, daemon.pid])
        try checkDescriptors(of: engine, startedBy: [daemon.pid])
        let own = try ProcessTree.environment(of: daemon.pid)
        XCTAssertEqual(try ProcessTree.environment(of: engine), SpawnEnvironment.forEngine(own))
        let theirs = try ProcessTree.environment(of: window)
        XCTAssertEqual(theirs["DISPLAY"], x.name)
        // no session bus at $XDG_RUNTIME_DIR/bus here: libdbus in SDL would autolaunch one
        let runtime = own["XDG_RUNTIME_DIR", default: ""]
        let busListens = !runtime.isEmpty && FileManager.default.fileExists(atPath: runtime + "/bus")
        XCTAssertEqual(theirs["DBUS_SESSION_BUS_ADDRESS"], busListens ? nil : SpawnEnvironment.unreachableBus,
                       "a bus address that starts nothing (\(runtime)/bus \(busListens ? "listens" : "does not exist"))")
        try checkEnvironment(theirs.filter { $0.key != "DBUS_SESSION_BUS_ADDRESS" }, allowed: SpawnEnvironment.videoWindow.allows)
        for (name, value) in theirs where name != "DISPLAY" && name != "XAUTHORITY" && name != "DBUS_SESSION_BUS_ADDRESS" {
            XCTAssertEqual(value, own[name], "\(name) is tonearmd's")
        }
        XCTAssertEqual(try ProcessTree.status(of: window, "NoNewPrivs"), "1", "inherited from the engine")
        XCTAssertEqual(try ProcessTree.status(of: window, "Seccomp"), "2", "the engine's filter, inherited (SandboxTests)")
    }

    // MARK: Checks, on /proc

    /// `child`'s descriptors beyond 0, 1 and 2 are its own: none is one of `parents`' (a socket or
    /// pipe is known by its inode, a file by its path), and 0 and 1 are pipes.
    private func checkDescriptors(of child: Int32, startedBy parents: [Int32], file: StaticString = #filePath, line: UInt = #line) throws {
        let theirs = try ProcessTree.descriptors(of: child)
        print("descriptors of \(child): \(theirs.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))")
        XCTAssertTrue(theirs[0]?.hasPrefix("pipe:") == true, "stdin is a pipe: \(theirs[0] ?? "none")", file: file, line: line)
        XCTAssertTrue(theirs[1]?.hasPrefix("pipe:") == true, "stdout is a pipe: \(theirs[1] ?? "none")", file: file, line: line)
        for parent in parents {
            let held = Set(try ProcessTree.descriptors(of: parent).values.filter { !$0.hasPrefix("anon_inode:") })
            for (number, target) in theirs where number > 2 && held.contains(target) {
                XCTFail("fd \(number) of \(child) is \(target), which \(parent) holds too: inherited", file: file, line: line)
            }
        }
    }

    private func checkEnvironment(_ environment: [String: String], allowed: (String) -> Bool,
                                  file: StaticString = #filePath, line: UInt = #line) throws {
        print("environment: \(environment.keys.sorted().joined(separator: " "))")
        XCTAssertNil(environment["DBUS_SESSION_BUS_ADDRESS"], "no bus address", file: file, line: line)
        for name in Self.planted.keys { XCTAssertNil(environment[name], "\(name) stays in tonearmd", file: file, line: line) }
        for name in environment.keys where !allowed(name) { XCTFail("\(name) is not in the list", file: file, line: line) }
    }
}
