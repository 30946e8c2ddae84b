import Foundation
import TestSupport
import XCTest

/// Every bad input gets a specific error (or is ignored where MPRIS says so); afterwards the
/// service still answers and nothing a user sees has changed.
final class BadInputTests: ServiceTestCase {
    typealias H = ServiceHarness
    static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
    static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
    static let readOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"

    private var before: PlayerSnapshot!
    private var tracks: [String] = []

    /// Two tracks, paused on the first, volume 0.7: a state in which any change shows.
    override func setUpWithError() throws {
        try super.setUpWithError()
        try harness.startPlaying([try short("a", seconds: 10, frequency: 440), try short("b", seconds: 10, frequency: 660)])
        try harness.playerctl("pause")
        try harness.waitForStatus("Paused")
        let mark = harness.mark()
        try harness.set(H.player, "Volume", "d", "0.7")
        try harness.waitForChange(H.player, "Volume 0.7", from: mark) { $0["Volume"]?.double == 0.7 }
        tracks = try harness.tracks
        before = try PlayerSnapshot(harness)
    }

    private func assertError(_ expected: [String], _ interface: String, _ method: String, _ arguments: [String] = [],
                             file: StaticString = #filePath, line: UInt = #line) throws {
        let error = try harness.errorReply(interface, method, arguments)
        let context = "\(interface).\(method)(\(arguments.joined(separator: ", ")))"
        XCTAssertNotNil(error, "\(context) succeeded", file: file, line: line)
        if let error {
            XCTAssertTrue(expected.contains { error.name == $0 || ($0.hasSuffix(".") && error.name.hasPrefix($0)) },
                          "\(context): \(error), expected \(expected)", file: file, line: line)
            XCTAssertFalse(error.message.isEmpty, "\(context): an error says why", file: file, line: line)
        }
        try assertUnchanged(before, context, file: file, line: line)
    }

    func testWrongSignaturesAreInvalidArgs() throws {
        try assertError([Self.invalidArgs], H.player, "Seek", ["string:ten"])
        try assertError([Self.invalidArgs], H.player, "Seek", ["int32:10"])
        try assertError([Self.invalidArgs], H.player, "SetPosition", ["int64:1000000"])
        try assertError([Self.invalidArgs], H.player, "SetPosition", ["string:\(tracks[0])", "int64:1000000"])
        try assertError([Self.invalidArgs], H.player, "OpenUri", ["int32:1"])
        try assertError([Self.invalidArgs], H.player, "Play", ["string:now"])
        try assertError([Self.invalidArgs], H.trackList, "GoTo", ["string:\(tracks[1])"])
        try assertError([Self.invalidArgs], H.trackList, "AddTrack", ["string:file:///x.ogg"])
        try assertError([Self.invalidArgs], H.trackList, "GetTracksMetadata", ["array:string:a,b"])
        try assertError([Self.invalidArgs], H.extensionInterface, "Enqueue", ["string:file:///x.ogg", "boolean:true"])
        try assertError([Self.invalidArgs], H.extensionInterface, "SeekTo", ["int64:1"])
        try assertError([Self.invalidArgs], H.properties, "Get", ["string:\(H.player)"])
        try assertError([Self.invalidArgs], H.properties, "Set", ["string:\(H.player)", "string:Volume", "double:0.5"])
    }

    func testUnknownMethodsInterfacesAndProperties() throws {
        try assertError([Self.unknownMethod], H.player, "Frobnicate")
        try assertError([Self.unknownMethod], H.root, "Play")
        try assertError([Self.unknownInterface, Self.unknownMethod], "org.example.Nothing", "Play")
        try assertError([Self.unknownInterface], H.properties, "Get", ["string:org.example.Nothing", "string:Volume"])
        try assertError([Self.unknownInterface], H.properties, "GetAll", ["string:org.example.Nothing"])
        try assertError([Self.unknownInterface], H.properties, "Set", ["string:org.example.Nothing", "string:Volume", "variant:double:0.1"])
        try assertError([Self.unknownProperty], H.properties, "Get", ["string:\(H.player)", "string:Loudness"])
        try assertError([Self.unknownProperty], H.properties, "Set", ["string:\(H.player)", "string:Loudness", "variant:double:0.1"])
        try assertError([Self.unknownProperty], H.properties, "Get", ["string:\(H.extensionInterface)", "string:Volume"])
    }

    func testSettingReadOnlyPropertiesIsPropertyReadOnly() throws {
        for (interface, property, value) in [
            (H.player, "PlaybackStatus", "variant:string:Playing"),
            (H.player, "Position", "variant:int64:1000000"),
            (H.player, "Metadata", "variant:string:x"),
            (H.player, "CanPlay", "variant:boolean:false"),
            (H.player, "MaximumRate", "variant:double:8"),
            (H.root, "Identity", "variant:string:Other"),
            (H.trackList, "Tracks", "variant:string:x"),
            (H.extensionInterface, "ItemStatus", "variant:string:failed"),
            (H.extensionInterface, "BufferingPercent", "variant:int32:5"),
        ] {
            try assertError([Self.readOnly], H.properties, "Set", ["string:\(interface)", "string:\(property)", value])
        }
    }

    /// A variant of the wrong type is refused before its value is read (one such call aborts VLC 3.0.24).
    func testSettingAVariantOfTheWrongTypeIsInvalidArgs() throws {
        for (interface, property, value) in [
            (H.player, "Volume", "variant:string:loud"),
            (H.player, "Volume", "variant:int32:1"),
            (H.player, "Rate", "variant:string:fast"),
            (H.player, "LoopStatus", "variant:boolean:true"),
            (H.player, "Shuffle", "variant:string:On"),
            (H.player, "Shuffle", "variant:int32:1"),
            (H.extensionInterface, "Muted", "variant:string:yes"),
            (H.root, "Fullscreen", "variant:string:yes"),
            (H.extensionInterface, "ControlsVisible", "variant:string:no"),
        ] {
            try assertError([Self.invalidArgs], H.properties, "Set", ["string:\(interface)", "string:\(property)", value])
        }
        XCTAssertEqual(try harness.get(H.player, "Volume").double, 0.7)
    }

    func testALoopStatusThatDoesNotExistIsInvalidArgs() throws {
        try assertError([Self.invalidArgs], H.properties, "Set", ["string:\(H.player)", "string:LoopStatus", "variant:string:Sometimes"])
        XCTAssertEqual(try harness.playerctl("loop"), "None")
    }

    /// MPRIS: object paths that name no track are ignored (or refused); never a crash.
    func testTrackPathsThatNameNoTrack() throws {
        for path in ["/io/github/tonearm/NoSuchTrack", H.noTrack, "/", H.path] {
            for (method, arguments) in [("GoTo", ["objpath:\(path)"]), ("RemoveTrack", ["objpath:\(path)"])] {
                if let error = try harness.errorReply(H.trackList, method, arguments) {
                    XCTAssertEqual(error.name, Self.invalidArgs, "\(method)(\(path)): \(error)")
                }
                try assertUnchanged(before, "\(method)(\(path))")
            }
            if let error = try harness.errorReply(H.player, "SetPosition", ["objpath:\(path)", "int64:2000000"]) {
                XCTAssertEqual(error.name, Self.invalidArgs, "SetPosition(\(path)): \(error)")
            }
            try assertUnchanged(before, "SetPosition(\(path))")
            // AddTrack after a track that does not exist adds nothing
            let error = try harness.errorReply(H.trackList, "AddTrack", ["string:\(H.uri(try short("a", seconds: 10)))", "objpath:\(path == H.noTrack ? "/io/github/tonearm/Gone" : path)", "boolean:false"])
            if let error { XCTAssertEqual(error.name, Self.invalidArgs, "AddTrack after \(path): \(error)") }
            try assertUnchanged(before, "AddTrack after \(path)")
        }
        // GetTracksMetadata of unknown ids answers, without them: only the known track's metadata
        let reply = try harness.call(H.trackList, "GetTracksMetadata", "ao", ["2", "/io/github/tonearm/NoSuchTrack", tracks[0]])
        XCTAssertEqual(reply.first?.type, "aa{sv}")
        let list = reply.first?.data as? [Any] ?? []
        XCTAssertEqual(list.count, 1, "\(reply)")
        let known = list.first.map { Typed(type: "a{sv}", data: $0) }?.dictionary
        XCTAssertEqual(known?["mpris:trackid"]?.string, tracks[0])
        try assertUnchanged(before, "GetTracksMetadata of an unknown id")
    }

    func testOpenUriOfAnUnsupportedSchemeOrAMissingFile() throws {
        try assertError([H.errorPrefix], H.player, "OpenUri", ["string:ftp://example.com/song.mp3"])
        try assertError([H.errorPrefix], H.player, "OpenUri", ["string:file:///nonexistent/tonearm/song.ogg"])
        try assertError([H.errorPrefix, Self.invalidArgs], H.player, "OpenUri", ["string:"])
        try assertError([H.errorPrefix, Self.invalidArgs], H.player, "OpenUri", ["string:ht tp://not a uri"])
        try assertError([H.errorPrefix, Self.invalidArgs], H.trackList, "AddTrack",
                        ["string:ftp://example.com/song.mp3", "objpath:\(H.noTrack)", "boolean:true"])
        // playerctl reports the failure and the player is as it was
        let output = try harness.playerctlOutput(["open", "ftp://example.com/song.mp3"])
        XCTAssertNotEqual(output.status, 0, "playerctl open ftp:// succeeded: \(output.stdout)")
        XCTAssertTrue(output.stderr.contains("\(H.errorPrefix)UnsupportedScheme"), output.stderr)
        try assertUnchanged(before, "playerctl open ftp://")
    }

    func testAHugeOrStrangeUriDoesNotHurt() throws {
        let huge = "file:///" + String(repeating: "a", count: 100_000) + ".ogg"
        let error = try XCTUnwrap(try harness.errorReply(H.player, "OpenUri", ["string:\(huge)"]), "a 100 kB URI was accepted")
        XCTAssertEqual(error.name, Self.invalidArgs, "a malformed URI is a bad argument: \(error)")
        XCTAssertTrue(error.message.hasPrefix("URI too long: 100012 bytes"), error.message)
        XCTAssertLessThan(error.message.utf8.count, 200, "the message does not repeat the URI")
        try assertUnchanged(before, "OpenUri of a 100 kB URI")
        for strange in ["file:///tmp/%00nul.ogg", "file:///tmp/%FF%FE.ogg", "file://host/remote.ogg", "file:relative.ogg", "http://"] {
            if let error = try harness.errorReply(H.player, "OpenUri", ["string:\(strange)"]) {
                XCTAssertTrue(error.name.hasPrefix(H.errorPrefix) || error.name == Self.invalidArgs, "\(strange): \(error)")
                try assertUnchanged(before, "OpenUri(\(strange))")
            } else {
                try harness.ping()
            }
        }
    }

    /// A FIFO blocks open(2) until someone writes to it: opening one must fail at once with a
    /// specific error, not hang the engine (or a tag read) for good. Devices likewise.
    func testOpenUriOfAFifoOrADeviceFailsAtOnce() throws {
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-\(UUID().uuidString).ogg")
        XCTAssertEqual(mkfifo(fifo.path, 0o600), 0, "mkfifo")
        defer { try? FileManager.default.removeItem(at: fifo) }
        for path in [fifo.path, "/dev/zero", "/dev/null"] {
            let error = try XCTUnwrap(try harness.errorReply(H.player, "OpenUri", ["string:\(H.uri(URL(fileURLWithPath: path)))"]),
                                      "OpenUri(\(path)) was accepted")
            XCTAssertEqual(error.name, "\(H.errorPrefix)UnsupportedFormat", "\(path): \(error)")
            XCTAssertTrue(error.message.contains("not a regular file"), "\(path): \(error.message)")
            try assertUnchanged(before, "OpenUri(\(path))")
        }
        // the engine was never stuck: a real file still plays
        let song = try short("after-fifo", seconds: 10)
        try harness.playerctl("open", H.uri(song))
        try harness.waitForStatus("Playing")
    }

    func testCallsWithNoReplyExpectedAndPingStillWork() throws {
        // a method call flagged no-reply-expected is still carried out (and the service survives)
        let sent = try Tool.run("dbus-send", ["--bus=\(harness.bus.address)", "--type=method_call", "--dest=\(harness.busName)",
                                              H.path, "\(H.player).Frobnicate"], timeout: 15)
        XCTAssertEqual(sent.status, 0)
        try assertUnchanged(before, "an unknown method without reply")
        let introspection = try harness.busctl(["introspect", harness.busName, H.path])
        XCTAssertTrue(introspection.contains(H.player))
    }
}
