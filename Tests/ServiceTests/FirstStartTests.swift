import Foundation
import TestSupport
import XCTest

/// The first start, with no GStreamer registry cache yet (`GST_REGISTRY` at a path of the test's
/// own): `gst_init` scans every plugin, which takes a second or more, and the service answers
/// meanwhile (issue 11). The scan's end is an event the test can see: GStreamer writes the registry
/// file when it finishes, and the engine logs "engine ready" after it.
final class FirstStartTests: ServiceTestCase {
    typealias H = ServiceHarness

    private var registry: URL { harness.directory.appendingPathComponent("gst-registry.bin") }
    private var firstStart: [String: String] { ["GST_REGISTRY": registry.path] }

    private var scanFinished: Bool {
        FileManager.default.fileExists(atPath: registry.path) || harness.daemon.output.contains("engine ready")
    }

    func testCallsAreAnsweredBeforeTheRegistryScanEndsAndTheFormatsOnlyOnceKnown() throws {
        try harness.start(environment: firstStart)
        try harness.ping()
        let player = try harness.getAll(H.player)
        XCTAssertFalse(scanFinished, "the answers waited for GStreamer's registry scan; log:\n\(harness.daemon.output)")
        XCTAssertEqual(player["PlaybackStatus"]?.string, "Stopped")
        // issue 26: a client that reads the root interface once at start (and caches it) gets the
        // real lists, never an empty placeholder: its read waits for the scan, nothing else does
        let root = try harness.getAll(H.root)
        XCTAssertTrue(scanFinished, "the lists were answered before they were known")
        XCTAssertEqual(root["SupportedUriSchemes"]?.strings.map(Set.init), ["file", "http", "https"])
        XCTAssertTrue(root["SupportedMimeTypes"]?.strings?.contains("audio/mpeg") == true, "\(root)")
        XCTAssertEqual(root["Identity"]?.string, "Tonearm")
        let mimeTypes = try harness.get(H.root, "SupportedMimeTypes")
        XCTAssertEqual(mimeTypes.type, "as")
        XCTAssertEqual(mimeTypes.strings, root["SupportedMimeTypes"]?.strings)
    }

    /// A `GetAll` of every interface at once (an empty interface name) waits the same way.
    func testAGetAllOfEveryInterfaceRightAfterTheNameHasTheFinalLists() throws {
        try harness.start(environment: firstStart)
        let all = try harness.call("org.freedesktop.DBus.Properties", "GetAll", "s", [""])
        XCTAssertTrue(scanFinished, "answered before the lists were known")
        let dictionary = try XCTUnwrap(all.first?.dictionary)
        XCTAssertTrue(dictionary["SupportedMimeTypes"]?.strings?.contains("audio/mpeg") == true, "\(dictionary.keys.sorted())")
        XCTAssertNotNil(dictionary["PlaybackStatus"], "every interface's properties")
    }

    /// A folder opened while the engine still starts is walked with the extensions GStreamer
    /// plays, once they are known: the call's answer waits for them, not the service.
    func testAFolderOpenedDuringTheFirstStartIsQueuedWhole() throws {
        let folder = harness.directory.appendingPathComponent("album")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (number, name) in [(1, "one"), (2, "two")] {
            try FileManager.default.copyItem(at: try short(name), to: folder.appendingPathComponent("\(number) - \(name).wav"))
        }
        try harness.start(environment: firstStart)
        XCTAssertFalse(scanFinished, "too late to test the first start; log:\n\(harness.daemon.output)")
        try harness.call(H.player, "OpenUri", "s", [H.uri(folder)])
        XCTAssertEqual(try harness.tracks.count, 2)
        try harness.waitForStatus("Playing")
        XCTAssertEqual(try harness.metadata["xesam:url"]?.string, H.uri(folder.appendingPathComponent("1 - one.wav")))
    }

    /// GStreamer that cannot start the engine (here: a sink description that does not parse) stops
    /// tonearmd with a line that says why and exit status 1, as before the set-up moved off the
    /// service queue.
    func testAnEngineThatCannotStartStopsTheServiceWithItsReason() throws {
        let log = harness.directory.appendingPathComponent("failing.log")
        let daemon = try Daemon.launch(on: harness.bus, sink: "nosuchelement_tonearm", cacheHome: harness.cacheHome,
                                       stateHome: harness.stateHome, musicDirectory: harness.musicDirectory, log: log)
        defer { daemon.stop() }
        XCTAssertEqual(daemon.waitForExit(timeout: 60), 1, daemon.output)
        XCTAssertTrue(daemon.output.contains("GStreamer could not start"), daemon.output)
        XCTAssertTrue(daemon.output.contains("nosuchelement_tonearm"), daemon.output)
    }
}
