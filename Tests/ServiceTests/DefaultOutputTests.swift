import Foundation
import TestSupport
import XCTest

/// `Output` "default" means the sound server's default device, always (issue 37): after a device
/// was chosen by name and the choice set back to default, while the desktop's default changes, and
/// after a restart, whatever the server (WirePlumber, PulseAudio's stream-restore) remembers of the
/// device the stream played on before. Heard on the null sinks' monitors; PipeWire here,
/// PulseAudio in `DefaultOutputPulseAudioTests`.
class DefaultOutputTests: SoundServerTestCase {
    private func setOutput(_ id: String) throws {
        let mark = harness.mark()
        try harness.set(H.extensionInterface, "Output", "s", id)
        try harness.waitForChange(H.extensionInterface, "Output \(id)", from: mark) { $0["Output"]?.string == id }
    }

    /// Plays on `sink` (heard there after `instant`), and only there.
    private func heardOnlyOn(_ sink: String, after instant: ContinuousClock.Instant, _ what: String) throws {
        let capture = try server.capture(sink)
        defer { capture.stop() }
        try waitForTone(capture, after: instant, what)
        XCTAssertEqual(try server.streams().map(\.sink), [sink], what)
    }

    func testDefaultAfterADeviceChosenByNameIsTheServersDefaultAndFollowsIt() throws {
        try startPlaying([try short("long", seconds: 60)], sinks: ["speakers", "headphones"])
        var asked = ContinuousClock.now
        try setOutput("headphones")
        try heardOnlyOn("headphones", after: asked, "the device chosen by name")

        asked = .now
        try setOutput("default")
        try heardOnlyOn("speakers", after: asked, "default again: the server's default device")

        asked = .now
        try server.setDefaultSink("headphones")
        try heardOnlyOn("headphones", after: asked, "the desktop made the headphones its default")

        asked = .now
        try server.setDefaultSink("speakers")
        try heardOnlyOn("speakers", after: asked, "the desktop's default back on the speakers")
        XCTAssertEqual(try harness.get(H.extensionInterface, "Output").string, "default")
    }

    /// A restart after a device was chosen by name and then default: the stream opens on the
    /// server's default, not on the device the server remembers it played on.
    func testDefaultAfterARestartIsTheServersDefaultNotTheDeviceRememberedForTheStream() throws {
        try startPlaying([try short("long", seconds: 60)], sinks: ["speakers", "dac"])
        var asked = ContinuousClock.now
        try setOutput("dac")
        try heardOnlyOn("dac", after: asked, "the DAC chosen by name")
        try setOutput("default")
        try heardOnlyOn("speakers", after: asked, "default again")

        let old = harness.daemon
        harness.exitExpected.insert(old.pid)
        old.stop()
        try harness.start([], sink: nil, environment: server.environment)
        XCTAssertEqual(try harness.get(H.extensionInterface, "Output").string, "default", "remembered")
        asked = .now
        try harness.call(H.player, "Play")
        try heardOnlyOn("speakers", after: asked, "after a restart, on the server's default")

        asked = .now
        try server.setDefaultSink("dac")
        try heardOnlyOn("dac", after: asked, "and it follows the desktop's default")
    }
}

/// `DefaultOutputTests` on PulseAudio, whose stream-restore module remembers a stream's device.
final class DefaultOutputPulseAudioTests: DefaultOutputTests {
    override var kind: SoundServer.Kind { .pulseaudio }

    // declared again: a subclass declaring none is not found by XCTest's discovery on Linux
    override func testDefaultAfterADeviceChosenByNameIsTheServersDefaultAndFollowsIt() throws {
        try super.testDefaultAfterADeviceChosenByNameIsTheServersDefaultAndFollowsIt()
    }
    override func testDefaultAfterARestartIsTheServersDefaultNotTheDeviceRememberedForTheStream() throws {
        try super.testDefaultAfterARestartIsTheServersDefaultNotTheDeviceRememberedForTheStream()
    }
}
