import Foundation
import TestSupport
import XCTest

/// A saved state that cannot be used never stops the service (issue 14): a corrupt file, one from
/// a newer tonearmd, a read-only directory and a full disk each get one clear log message, and the
/// service runs and answers with a fresh (or the restored) state.
final class BadStateTests: ServiceTestCase {
    typealias H = ServiceHarness

    var stateDirectory: URL { harness.stateHome.appendingPathComponent("tonearm") }
    var stateFile: URL { stateDirectory.appendingPathComponent("state.sqlite") }

    /// How many lines of `log` contain `text`.
    func count(_ text: String, in log: String) -> Int {
        log.split(separator: "\n").filter { $0.contains(text) }.count
    }

    /// SIGTERM, and the wait for exit status 0 (not a crash, not SIGXFSZ).
    func terminate(_ daemon: Daemon) {
        harness.exitExpected.insert(daemon.pid)
        daemon.process.terminate()
        XCTAssertEqual(daemon.waitForExit(timeout: 15), 0, "tonearmd did not stop cleanly:\n\(daemon.output)")
    }

    /// A first run that saves two tracks, stopped cleanly.
    func saveTwoTracks() throws -> [String] {
        try harness.startPlaying([try short("a", seconds: 10), try short("b", seconds: 10, frequency: 660)])
        let tracks = try harness.tracks
        XCTAssertEqual(tracks.count, 2)
        terminate(harness.daemon)
        return tracks
    }

    func asideFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: stateDirectory.path).filter { $0.hasPrefix("state.sqlite.") }.sorted()
    }

    func testACorruptFileIsMovedAsideAndAFreshStateSaves() throws {
        try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        let garbage = Data((0..<16_384).map { UInt8(truncatingIfNeeded: $0 &* 7919 >> 3) })
        try garbage.write(to: stateFile)
        let daemon = try harness.start()
        XCTAssertEqual(try harness.tracks, [], "a fresh state")
        XCTAssertEqual(try harness.playbackStatus, "Stopped")
        XCTAssertEqual(count("is corrupt", in: daemon.output), 1, daemon.output)
        XCTAssertTrue(daemon.output.contains("moved it to \(stateFile.path).corrupt-"), daemon.output)
        let aside = try asideFiles()
        XCTAssertEqual(aside.count, 1, "\(aside)")
        XCTAssertEqual(try Data(contentsOf: stateDirectory.appendingPathComponent(aside[0])), garbage, "the bad file is kept as it was")

        // the fresh file saves
        try harness.playerctl("open", H.uri(try short("c", seconds: 10)))
        try harness.waitForStatus("Playing")
        let tracks = try harness.tracks
        terminate(daemon)
        try harness.start()
        XCTAssertEqual(try harness.tracks, tracks)
    }

    func testAFileFromANewerVersionIsMovedAsideUntouched() throws {
        _ = try saveTwoTracks()
        // what a later schema would say of itself (sqlite.org/pragma.html#pragma_user_version)
        let sqlite = try Tool.run("sqlite3", [stateFile.path, "PRAGMA user_version = 99"], timeout: 15)
        XCTAssertEqual(sqlite.status, 0, sqlite.stderr)
        let daemon = try harness.start()
        XCTAssertEqual(try harness.tracks, [], "a fresh state, not a guess at a newer one")
        XCTAssertEqual(count("written by a newer tonearmd (schema version 99", in: daemon.output), 1, daemon.output)
        let aside = try asideFiles()
        XCTAssertEqual(aside.count, 1, "\(aside)")
        XCTAssertTrue(aside[0].hasPrefix("state.sqlite.v99-"), "\(aside)")
        let version = try Tool.run("sqlite3", [stateDirectory.appendingPathComponent(aside[0]).path, "PRAGMA user_version"], timeout: 15)
        XCTAssertEqual(version.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "99")
        let rows = try Tool.run("sqlite3", [stateDirectory.appendingPathComponent(aside[0]).path, "SELECT count(*) FROM item"], timeout: 15)
        XCTAssertEqual(rows.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "2", "its queue is still in it")
    }

    func testAReadOnlyStateDirectoryRestoresAndRunsWithoutSaving() throws {
        let tracks = try saveTwoTracks()
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: stateFile.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: stateDirectory.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: stateDirectory.path) }
        // root writes anywhere: without CAP_DAC_OVERRIDE it meets the permissions as a user would
        let launcher = getuid() == 0 ? ["/usr/bin/setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"] : []
        let daemon = try harness.start(launcher: launcher)
        XCTAssertEqual(try harness.tracks, tracks, "what the file held is restored")
        XCTAssertEqual(try harness.playbackStatus, "Paused")
        XCTAssertEqual(count("cannot save the player's state", in: daemon.output), 1, daemon.output)
        XCTAssertEqual(count("\(stateDirectory.path) is not writable: Permission denied", in: daemon.output), 1, "the system's reason is said:\n\(daemon.output)")
        // it plays and changes as ever, saving nothing
        try harness.playerctl("next")
        try harness.waitForTrack(tracks[1])
        try harness.set(H.player, "Volume", "d", "0.5")
        try harness.ping()
        terminate(daemon)
        XCTAssertEqual(count("cannot save the player's state", in: daemon.output), 1, "said once:\n\(daemon.output)")
        XCTAssertEqual(try asideFiles(), [], "a good file that cannot be written is not moved")
    }

    func testAFileTooLargeToWriteStopsTheSavingNotTheService() throws {
        // 6,000 entries with long names (over 200 bytes each) do not fit in 1 MiB; the file-size
        // limit makes the write fail as a full disk does (EFBIG instead of ENOSPC). Not less than
        // 1 MiB: ThreadSanitizer's runtime dies at start under a limit of 64 KiB (make test-tsan)
        let seed = try short("seed", seconds: 0.3)
        let folder = harness.directory.appendingPathComponent("many")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let padding = String(repeating: "long name ", count: 12)
        for index in 1...6_000 {
            try FileManager.default.linkItem(at: seed, to: folder.appendingPathComponent("\(padding)\(index).wav"))
        }
        let daemon = try harness.start(["--log-level", "info"], launcher: ["/usr/bin/prlimit", "--fsize=1048576", "--"])
        let ids = try harness.call(H.extensionInterface, "Enqueue", "asb", ["1", H.uri(folder), "false"])
        XCTAssertEqual(ids.first?.strings?.count, 6_000)
        try harness.set(H.player, "Volume", "d", "0.5")
        try harness.call(H.trackList, "RemoveTrack", "o", [try XCTUnwrap(ids.first?.strings?.last)])
        XCTAssertEqual(try harness.tracks.count, 5_999)
        try harness.ping()
        // SIGTERM waits for the saving: by its exit the failure has been said
        terminate(daemon)
        XCTAssertEqual(count("cannot save the player's state: writing", in: daemon.output), 1, "said once, however often it is tried again:\n\(daemon.output)")
        XCTAssertEqual(count("the file-size limit (ulimit -f) of 1048576 bytes was reached", in: daemon.output), 1, "the system's reason is said:\n\(daemon.output)")
    }
}
