import Foundation
import TestSupport
import XCTest

/// D-Bus activation: a client's OpenUri starts tonearmd through dbus/'s activation file.
final class ActivationTests: XCTestCase {
    let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    func testOpenUriStartsTheServiceThroughActivation() throws {
        let activationFile = repository.appendingPathComponent("dbus/org.mpris.MediaPlayer2.tonearm.service")
        let text = try String(contentsOf: activationFile, encoding: .utf8)
        let lines = text.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "[D-BUS Service]")
        XCTAssertTrue(lines.contains("Name=org.mpris.MediaPlayer2.tonearm"))
        XCTAssertTrue(lines.contains { $0.hasPrefix("Exec=") && $0.hasSuffix("/tonearmd") })

        // the same file, with Exec pointing at the built binary and a silent real-time sink
        let services = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-services-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: services) }
        let executable = try ServiceHarness.executable()
        let local = lines.map { $0.hasPrefix("Exec=") ? "Exec=\(executable.path) --audio-sink \"fakesink sync=true\"" : $0 }
        try local.joined(separator: "\n").appending("\n")
            .write(to: services.appendingPathComponent("org.mpris.MediaPlayer2.tonearm.service"), atomically: true, encoding: .utf8)

        let bus = try PrivateBus(serviceDirectory: services)
        defer { bus.stop() }
        let media = try MediaGenerator()
        let file = try media.tone("activated", format: .ogg, seconds: 5, tags: .init(title: "Activated"))
        func gdbus(_ arguments: [String]) throws -> String {
            let output = try Tool.run("gdbus", ["call", "--address", bus.address, "--dest", "org.mpris.MediaPlayer2.tonearm",
                                                "--object-path", "/org/mpris/MediaPlayer2"] + arguments, timeout: 30)
            XCTAssertEqual(output.status, 0, output.stderr)
            return output.stdout
        }
        // nothing runs yet: the call itself starts the service, which answers once it owns the name
        _ = try gdbus(["--method", "org.mpris.MediaPlayer2.Player.OpenUri", file.absoluteString])
        XCTAssertTrue(try gdbus(["--method", "org.freedesktop.DBus.Properties.Get", "org.mpris.MediaPlayer2.Player",
                                 "PlaybackStatus"]).contains("'Playing'"))
        _ = try gdbus(["--method", "org.mpris.MediaPlayer2.Quit"])
    }
}
