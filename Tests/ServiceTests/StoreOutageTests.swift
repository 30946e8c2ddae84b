import Foundation
import TestSupport
import XCTest

/// Nothing lost (issue 26): a state that cannot be written for a while (a full disk, EIO, a
/// read-only remount, its folder deleted) is kept in memory and saved once the file can be
/// written again, and a restart then shows everything the user did, before and after. Each test
/// puts the state folder on a real file system that fails as a user's would (CI runs as root).
final class StoreOutageTests: ServiceTestCase {
    typealias H = ServiceHarness

    var stateDirectory: URL { harness.stateHome.appendingPathComponent("tonearm") }
    /// What a test mounted: unmounted (lazily: tonearmd may still hold it) before the harness goes.
    var mounted: [URL] = []
    var helpers: [Process] = []

    override func tearDown() {
        for mountpoint in mounted.reversed() { _ = try? Tool.run("/usr/bin/umount", ["-l", mountpoint.path], timeout: 15) }
        for helper in helpers where helper.isRunning { helper.terminate() }
        super.tearDown()
    }

    func mountTmpfs(at directory: URL, size: String) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let mount = try Tool.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=\(size),mode=0700", "tmpfs", directory.path], timeout: 15)
        XCTAssertEqual(mount.status, 0, "mount tmpfs (the tests run as root): \(mount.stderr)")
        if mount.status == 0 { mounted.append(directory) }
    }

    /// Fills the file system of `directory` to the last byte with one file, and returns it.
    func fill(_ directory: URL) throws -> URL {
        let filler = directory.appendingPathComponent("filler")
        // dd stops at ENOSPC with status 1: that is the point
        _ = try Tool.run("/usr/bin/dd", ["if=/dev/zero", "of=\(filler.path)", "bs=4096"], timeout: 60)
        var info = statvfs()
        XCTAssertEqual(statvfs(directory.path, &info), 0)
        XCTAssertEqual(info.f_bavail, 0, "the disk is full")
        return filler
    }

    /// SIGKILL, and the wait for the exit: nothing is written at the end.
    func kill(_ daemon: Daemon) {
        harness.exitExpected.insert(daemon.pid)
        Foundation.kill(daemon.pid, SIGKILL)
        XCTAssertEqual(daemon.waitForExit(timeout: 10), SIGKILL, "tonearmd did not die of SIGKILL")
    }

    /// Adds `file` at the end of the queue; returns its track id.
    @discardableResult
    func add(_ file: URL) throws -> String {
        let ids = try harness.call(H.extensionInterface, "Enqueue", "asb", ["1", H.uri(file), "false"])
        return try XCTUnwrap(ids.first?.strings?.first, "Enqueue gave a track id")
    }

    func count(_ text: String, in daemon: Daemon) -> Int {
        daemon.output.split(separator: "\n").filter { $0.contains(text) }.count
    }

    static let failed = "cannot save the player's state: writing"
    static let savingAgain = "saving the player's state again"

    /// The first run: two tracks, saved.
    func startWithTwoTracks() throws -> (Daemon, [String]) {
        let daemon = try harness.start(["--log-level", "debug", H.uri(try short("one", seconds: 20)),
                                        H.uri(try short("two", seconds: 20, frequency: 660))])
        try harness.waitForStatus("Playing")
        try daemon.waitForLog("saved the state:")
        return (daemon, try harness.tracks)
    }

    /// Kills tonearmd, starts it again, and checks the queue it shows is `tracks`.
    func assertRestartShows(_ tracks: [String], killing daemon: Daemon, file: StaticString = #filePath, line: UInt = #line) throws {
        kill(daemon)
        let second = try harness.start()
        XCTAssertEqual(try harness.tracks, tracks, "after the restart, the queue as the user left it:\n\(second.output)", file: file, line: line)
    }

    /// Two tracks saved on a 1 MiB tmpfs, which is then filled, and a third track added that cannot
    /// be saved: the daemon, the queue as the user sees it, the filler and the log's mark before.
    func fullDiskWithAChangeWaiting() throws -> (daemon: Daemon, tracks: [String], filler: URL, mark: Int) {
        try mountTmpfs(at: harness.stateHome, size: "1m")
        let (daemon, saved) = try startWithTwoTracks()
        // the mark before the filling: a position checkpoint that falls while the disk fills fails
        // first (under load, filling takes seconds), and the outage is said once
        let mark = daemon.output.utf8.count
        let filler = try fill(harness.stateHome)
        let added = try add(try short("during", seconds: 5))
        try daemon.waitForLog(Self.failed, after: mark)
        return (daemon, saved + [added], filler, mark)
    }

    func testAFullDiskKeepsTheStateAndSavesItAllOnceSpaceComesBack() throws {
        // while the disk is full: the service plays on, the change waits in memory
        let (daemon, waiting, filler, mark) = try fullDiskWithAChangeWaiting()
        var tracks = waiting
        XCTAssertTrue(daemon.output.contains("the disk is full"), "the system's reason is said:\n\(daemon.output)")
        try harness.set(H.player, "Volume", "d", "0.5")
        tracks.append(try add(try short("during-2", seconds: 5)))
        XCTAssertEqual(try harness.playbackStatus, "Playing")

        // space comes back: the next change saves everything
        try FileManager.default.removeItem(at: filler)
        tracks.append(try add(try short("after", seconds: 5)))
        try daemon.waitForLog(Self.savingAgain, after: mark)
        XCTAssertEqual(count(Self.failed, in: daemon), 1, "said once per episode, not once per change:\n\(daemon.output)")
        XCTAssertEqual(count(Self.savingAgain, in: daemon), 1, daemon.output)
        try assertRestartShows(tracks, killing: daemon)
        XCTAssertEqual(try harness.get(H.player, "Volume").double, 0.5, "the volume set while the disk was full")
    }

    func testWithNoFurtherChangeTheRetryTimerSavesOnceSpaceComesBack() throws {
        let (daemon, tracks, filler, mark) = try fullDiskWithAChangeWaiting()
        try FileManager.default.removeItem(at: filler)
        // nothing else happens: the backoff (1, 2, 4 s ...) tries again by itself
        try daemon.waitForLog(Self.savingAgain, after: mark, timeout: 30)
        try assertRestartShows(tracks, killing: daemon)
    }

    /// A home whose file system the kernel remounts read-only on an error (ext4's
    /// errors=remount-ro; `remount,ro` by hand is refused while a file is open for writing), mounted
    /// again read-write after a check, as a user's system does.
    func testAReadOnlyRemountIsSurvived() throws {
        let image = harness.directory.appendingPathComponent("home.ext4")
        try run("/usr/bin/truncate", ["-s", "16M", image.path])
        try run("/usr/sbin/mkfs.ext4", ["-q", "-F", image.path])
        try FileManager.default.createDirectory(at: harness.stateHome, withIntermediateDirectories: true)
        try run("/usr/bin/mount", ["-o", "loop,errors=remount-ro", image.path, harness.stateHome.path])
        mounted.append(harness.stateHome)
        let (daemon, saved) = try startWithTwoTracks()
        var tracks = saved

        // the kernel's own path to a read-only file system: an ext4 error (fs/ext4/sysfs.c trigger_fs_error)
        let device = try run("/usr/bin/findmnt", ["-n", "-o", "SOURCE", harness.stateHome.path])
        let name = URL(fileURLWithPath: device.trimmingCharacters(in: .whitespacesAndNewlines)).lastPathComponent
        let mark = daemon.output.utf8.count  // before the fault: a checkpoint may meet it first
        try Data("1".utf8).write(to: URL(fileURLWithPath: "/sys/fs/ext4/\(name)/trigger_fs_error"))
        tracks.append(try add(try short("while-ro", seconds: 5)))
        try daemon.waitForLog(Self.failed, after: mark)
        // Linux 6.x turns the file system "emergency_ro" and fails writes with EIO or EROFS, as it goes
        XCTAssertTrue(daemon.output.contains("Read-only file system") || daemon.output.contains("disk I/O error"),
                      "the system's reason is said:\n\(daemon.output)")
        try harness.set(H.player, "Volume", "d", "0.25")

        // checked and mounted again read-write: the failed write closed the file, so it unmounts
        try run("/usr/bin/umount", [harness.stateHome.path])
        _ = try Tool.run("/usr/sbin/e2fsck", ["-f", "-y", image.path], timeout: 60)  // 1: errors corrected
        try run("/usr/bin/mount", ["-o", "loop,errors=remount-ro", image.path, harness.stateHome.path])
        tracks.append(try add(try short("after-rw", seconds: 5)))
        try daemon.waitForLog(Self.savingAgain, after: mark)
        try assertRestartShows(tracks, killing: daemon)
        XCTAssertEqual(try harness.get(H.player, "Volume").double, 0.25, "the volume set while it was read-only")
    }

    /// Runs a tool that must succeed; its standard output.
    @discardableResult
    func run(_ tool: String, _ arguments: [String]) throws -> String {
        let result = try Tool.run(tool, arguments, timeout: 60)
        guard result.status == 0 else { throw TestError("\(tool) \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.stderr)") }
        return result.stdout
    }

    func testTheStateFolderDeletedWhileRunningIsMadeAgain() throws {
        let (daemon, saved) = try startWithTwoTracks()
        var tracks = saved
        try FileManager.default.removeItem(at: stateDirectory)
        let mark = daemon.output.utf8.count
        tracks.append(try add(try short("after-rm", seconds: 5)))
        try daemon.waitForLog(Self.savingAgain, after: mark)
        XCTAssertTrue(FileManager.default.fileExists(atPath: stateDirectory.appendingPathComponent("state.sqlite").path))
        try assertRestartShows(tracks, killing: daemon)
    }

    func testEIOFromAFlakyDiskIsSurvived() throws {
        // a FUSE file system over a backing folder that answers EIO while a control file exists
        let backing = harness.directory.appendingPathComponent("backing")
        let control = harness.directory.appendingPathComponent("fail-eio")
        try FileManager.default.createDirectory(at: backing, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: harness.stateHome, withIntermediateDirectories: true)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("PySupport/eio_fs.py")
        let fuse = Process()
        fuse.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        fuse.arguments = [script.path, backing.path, harness.stateHome.path, control.path]
        try fuse.run()
        helpers.append(fuse)
        mounted.append(harness.stateHome)
        try waitUntil("the FUSE file system is mounted") { (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8))?.contains(" \(harness.stateHome.path) fuse") == true }

        let (daemon, saved) = try startWithTwoTracks()
        var tracks = saved
        let mark = daemon.output.utf8.count  // before the fault: a checkpoint may meet it first
        FileManager.default.createFile(atPath: control.path, contents: nil)
        tracks.append(try add(try short("during-eio", seconds: 5)))
        try daemon.waitForLog(Self.failed, after: mark)
        try FileManager.default.removeItem(at: control)
        tracks.append(try add(try short("after-eio", seconds: 5)))
        try daemon.waitForLog(Self.savingAgain, after: mark)
        try assertRestartShows(tracks, killing: daemon)
    }

    /// Waits for `condition`, checking it as a file system changes (a short interval: a mount has no event to wait on).
    func waitUntil(_ what: String, timeout: TimeInterval = 15, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            guard Date() < deadline else { throw TestError("timed out waiting for \(what)") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }
}

extension Daemon {
    /// Waits until tonearmd's log, past its first `offset` bytes, has a line containing `text`.
    func waitForLog(_ text: String, after offset: Int = 0, timeout: TimeInterval = 15) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !String(decoding: output.utf8.dropFirst(offset), as: UTF8.self).contains(text) {
            guard isRunning else { throw TestError("tonearmd exited before its log said '\(text)':\n\(output)") }
            guard Date() < deadline else { throw TestError("tonearmd's log did not say '\(text)' within \(timeout) s:\n\(output)") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }
}
