import Foundation
import TestSupport
import XCTest

/// At rest with nothing to play, GStreamer is not running (issue 30): a start that finds the
/// formats of the last one cached publishes them without it, and the engine's process starts when
/// something needs it (an item to play, the list of outputs). tonearmd itself never maps GStreamer.
final class LeanStartTests: ServiceTestCase {
    typealias H = ServiceHarness

    /// The first start computes the lists with GStreamer; the second has the same lists at its
    /// first read, GStreamer unloaded, and loads it for the file it is asked to play.
    private func startAgainWithTheCache() throws -> [String: Typed] {
        try harness.start()
        let first = try harness.getAll(H.root)
        // the first start has no cache: GStreamer computes the lists (its process may have ended since)
        XCTAssertTrue(harness.daemon.output.contains("engine ready"), harness.daemon.output)
        harness.exitExpected.insert(harness.daemon.pid)
        harness.daemon.process.terminate()
        XCTAssertEqual(harness.daemon.waitForExit(timeout: 10), 0, harness.daemon.output)
        try harness.start()
        return first
    }

    func testTheCachedFormatsAreTheListsAndGStreamerWaitsForAnItem() throws {
        let first = try startAgainWithTheCache()
        let root = try harness.getAll(H.root)
        XCTAssertEqual(root["SupportedUriSchemes"]?.strings, first["SupportedUriSchemes"]?.strings)
        XCTAssertEqual(root["SupportedMimeTypes"]?.strings, first["SupportedMimeTypes"]?.strings)
        XCTAssertTrue(root["SupportedMimeTypes"]?.strings?.contains("audio/mpeg") == true, "\(root)")
        XCTAssertEqual(try harness.getAll(H.player)["PlaybackStatus"]?.string, "Stopped")
        XCTAssertFalse(try pluginsMapped(), "GStreamer was initialised with nothing to play")
        // a folder is walked with the cached extensions, and its file plays
        let folder = harness.directory.appendingPathComponent("album")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: try short("one"), to: folder.appendingPathComponent("1 - one.wav"))
        try harness.call(H.player, "OpenUri", "s", [H.uri(folder)])
        try harness.waitForStatus("Playing")
        XCTAssertEqual(try harness.metadata["xesam:url"]?.string, H.uri(folder.appendingPathComponent("1 - one.wav")))
        XCTAssertTrue(try pluginsMapped())
    }

    /// The outputs are listed by the engine: a read of them starts it and waits for the list.
    func testAReadOfTheOutputsStartsTheEngine() throws {
        _ = try startAgainWithTheCache()
        XCTAssertFalse(try pluginsMapped())
        let outputs = try harness.get(H.extensionInterface, "Outputs")
        XCTAssertEqual(outputs.type, "a(sss)")
        XCTAssertTrue(harness.daemon.output.contains("engine ready"), harness.daemon.output)
    }
}

extension ServiceTestCase {
    /// What process `pid` has mapped (/proc/PID/maps), checked to be read whole by `wholeIf`, a
    /// library mapped at the end of it.
    func maps(of pid: Int32, wholeIf last: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        // read to the end: a /proc file's size is 0, and reading by size would see a part of it
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(pid)/maps"))
        defer { try? handle.close() }
        let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        XCTAssertTrue(maps.contains(last), "the maps were read whole", file: file, line: line)
        return maps
    }

    /// The engine's process (`tonearm-engine`, started by tonearmd), when it runs.
    var enginePID: Int32? { ProcessTree.descendants(of: harness.daemon.pid, named: "tonearm-engine").first }

    /// Waits for the engine's process to be gone: nothing loaded, it ends 2 s after the last
    /// command (RemoteEngine.idleLimit). A process's end has no event a test can wait on here:
    /// /proc is read again until then.
    func waitForNoEngine(_ what: String = "the engine's process to end", timeout: TimeInterval = 10) throws {
        let deadline = Date().addingTimeInterval(timeout * ServiceHarness.slowdown)
        while enginePID != nil {
            guard Date() < deadline else { throw TestError("timed out waiting for \(what) (\(timeout) s):\n\(harness.logs)") }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    /// Whether GStreamer's plugins are mapped in the engine's process: gst_init loads some
    /// (coreelements at least) and every pipeline more; tonearmd itself never maps GStreamer.
    func pluginsMapped(file: StaticString = #filePath, line: UInt = #line) throws -> Bool {
        XCTAssertFalse(try maps(of: harness.daemon.pid, wholeIf: "libdbus-1").contains("libgstreamer"), "tonearmd mapped GStreamer",
                       file: file, line: line)
        guard let engine = enginePID else { return false }
        return try maps(of: engine, wholeIf: "libgstreamer-1.0").contains("/gstreamer-1.0/")
    }
}
