import EngineLink
import Foundation
import PlayerModel
import XCTest

/// The engine's link is a written protocol, not whatever Swift derives (issue 37): every request
/// and report, with every command, event, video, audio and crossfade case inside them, has its line
/// in `EngineWire.golden`, and encodes to exactly that line and decodes from it. A case renamed, a
/// field added or a type's encoding changed fails here; the change then goes with a new
/// `EngineWire.version` and new golden lines (write them with TONEARM_WRITE_GOLDEN=1 and read the
/// diff). Each kind list below is tied to its type by an exhaustive switch, so a new case does not
/// compile until it has a sample, and its sample has no line until one is written.
final class EngineWireGoldenTests: XCTestCase {
    static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("EngineWire.golden")
    static let architecture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("ARCHITECTURE.md")

    /// Every sample, named "Type.case", as the line it must be.
    private func samples() throws -> [(name: String, line: String)] {
        var all: [(String, String)] = []
        func add(_ name: String, _ value: some Encodable) throws {
            all.append((name, String(decoding: try EngineWire.line(value).dropLast(), as: UTF8.self)))
        }
        for kind in RequestKind.allCases {
            let sample = try kind.sample()
            XCTAssertEqual(RequestKind(sample), kind)
            try add("EngineRequest.\(kind)", sample)
        }
        for kind in ReportKind.allCases {
            let sample = try kind.sample()
            XCTAssertEqual(ReportKind(sample), kind)
            try add("EngineReport.\(kind)", sample)
        }
        for kind in CommandKind.allCases {
            let sample = try kind.sample()
            XCTAssertEqual(CommandKind(sample), kind)
            try add("EngineCommand.\(kind)", EngineRequest.command(2, sample))
        }
        for kind in EventKind.allCases {
            let sample = try kind.sample()
            XCTAssertEqual(EventKind(sample), kind)
            try add("EngineEvent.\(kind)", EngineReport.event(Generation(5), sample))
        }
        for kind in VideoCommandKind.allCases {
            let sample = kind.sample
            XCTAssertEqual(VideoCommandKind(sample), kind)
            try add("VideoCommand.\(kind)", EngineRequest.command(3, .video(sample)))
        }
        for kind in VideoEventKind.allCases {
            let sample = kind.sample
            XCTAssertEqual(VideoEventKind(sample), kind)
            try add("VideoEvent.\(kind)", EngineReport.event(Generation(6), .video(sample)))
        }
        for kind in WindowInputKind.allCases {
            let sample = kind.sample
            XCTAssertEqual(WindowInputKind(sample), kind)
            try add("WindowInput.\(kind)", EngineReport.event(Generation(7), .video(.input(sample))))
        }
        for kind in AudioCommandKind.allCases {
            let sample = kind.sample
            XCTAssertEqual(AudioCommandKind(sample), kind)
            try add("AudioCommand.\(kind)", EngineRequest.command(4, .audio(sample)))
        }
        for kind in CrossfadeCommandKind.allCases {
            let sample = try kind.sample()
            XCTAssertEqual(CrossfadeCommandKind(sample), kind)
            try add("CrossfadeCommand.\(kind)", EngineRequest.command(5, .crossfade(sample)))
        }
        return all
    }

    func testEveryLineIsTheGoldenOne() throws {
        let made = try samples()
        let text = "# The engine link's lines, protocol version \(EngineWire.version) (ARCHITECTURE.md, \"The engine's link\"): a name, a tab, the line.\n"
            + made.map { "\($0.name)\t\($0.line)" }.joined(separator: "\n") + "\n"
        if ProcessInfo.processInfo.environment["TONEARM_WRITE_GOLDEN"] == "1" {
            try text.write(to: Self.golden, atomically: true, encoding: .utf8)
        }
        let golden = try String(contentsOf: Self.golden, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }
        var expected: [String: String] = [:]
        for entry in golden {
            let parts = entry.split(separator: "\t", maxSplits: 1)
            XCTAssertEqual(parts.count, 2, "a golden entry is a name, a tab and a line: \(entry)")
            if parts.count == 2 { expected[String(parts[0])] = String(parts[1]) }
        }
        for (name, line) in made {
            XCTAssertEqual(line, expected[name], "\(name) is not written as EngineWire.golden says: a change of the link's format needs a new EngineWire.version and new golden lines")
        }
        XCTAssertEqual(Set(expected.keys), Set(made.map(\.name)), "EngineWire.golden has a line for each sample, and no other")
    }

    /// Each golden line reads back as the value it was written from: both ends read what the other wrote.
    func testEveryGoldenLineDecodes() throws {
        let golden = try String(contentsOf: Self.golden, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }
        for entry in golden {
            let parts = entry.split(separator: "\t", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            let bytes = Array(parts[1].utf8)[...]
            if parts[0].hasPrefix("EngineRequest.") || parts[0].hasPrefix("EngineCommand.") || parts[0].hasPrefix("VideoCommand.")
                || parts[0].hasPrefix("AudioCommand.") || parts[0].hasPrefix("CrossfadeCommand.") {
                let request = try EngineWire.decode(EngineRequest.self, from: bytes)
                XCTAssertEqual(String(decoding: try EngineWire.line(request).dropLast(), as: UTF8.self), parts[1], parts[0])
            } else {
                let report = try EngineWire.decode(EngineReport.self, from: bytes)
                XCTAssertEqual(String(decoding: try EngineWire.line(report).dropLast(), as: UTF8.self), parts[1], parts[0])
            }
        }
    }

    /// ARCHITECTURE.md, where the format is written down, names the version the code speaks.
    func testTheWrittenFormatNamesTheVersion() throws {
        let text = try String(contentsOf: Self.architecture, encoding: .utf8)
        XCTAssertTrue(text.contains("protocol version \(EngineWire.version)"),
                      "ARCHITECTURE.md's \"The engine's link\" says \"protocol version \(EngineWire.version)\"")
    }

    /// A line that is not one is an error that says what it was, never a value made up.
    func testALineThatIsNotOneIsAnErrorNamingIt() {
        XCTAssertThrowsError(try EngineWire.decode(EngineReport.self, from: Array(#"{"asyncDun":{}}"#.utf8)[...])) { error in
            XCTAssertTrue("\(error)".contains("asyncDun"), "\(error)")
        }
        XCTAssertThrowsError(try EngineWire.line(EngineRequest.command(1, .setVolume(.nan)))) { error in
            XCTAssertTrue("\(error)".contains("cannot write"), "\(error)")
        }
    }
}

// MARK: Samples, one per case

private enum Samples {
    static func uri() throws -> MediaURI { try MediaURI("/music/a b/caf\u{E9} #1.flac") }
    static let remote = "https://example.org/live/index.m3u8?token=a%20b"
    /// An instant is the monotonic clock's, as both processes read it: decoded, so that it is fixed.
    static func instant() throws -> ContinuousClock.Instant {
        try JSONDecoder().decode(ContinuousClock.Instant.self, from: Data(#"{"_value":[0,9610021074812867584]}"#.utf8))
    }
    static func position() throws -> PositionSample { PositionSample(.milliseconds(1500), at: try instant()) }
    static func snapshot() throws -> EngineSnapshot {
        EngineSnapshot(position: try position(), duration: .seconds(180), isSeekable: true,
                       loadedRanges: [TimeRange(start: .zero, end: .seconds(30))],
                       seekableRange: TimeRange(start: .seconds(10), end: .seconds(40)), streamWakesWhilePaused: true,
                       durationEstimate: .seconds(179))
    }
    static var metadata: Metadata {
        var metadata = Metadata()
        metadata.title = "Title \"quoted\"\nline"
        metadata.artists = ["A", "B"]
        metadata.album = "Album"
        metadata.albumArtists = ["AA"]
        metadata.trackNumber = 3
        metadata.discNumber = 1
        metadata.genres = ["Jazz"]
        metadata.date = "2024-05-17"
        metadata.comment = "c"
        metadata.audioCodec = "FLAC"
        metadata.videoCodec = "H.264"
        metadata.bitrate = 320_000
        metadata.coverURL = URL(fileURLWithPath: "/tmp/covers/ab cd.jpg")
        metadata.streamTitle = "Now"
        metadata.organization = "Radio"
        metadata.lyrics = "la\nla"
        metadata.sidecarLyrics = Lyrics(text: "one\ntwo", lines: [LyricLine(time: .milliseconds(1500), text: "one")])
        return metadata
    }
    static var configuration: EngineConfiguration {
        var configuration = EngineConfiguration(pipeline: .playbin3, audioSink: "fakesink sync=true", video: false)
        configuration.videoSink = "software"
        configuration.videoHelper = "/usr/libexec/tonearm-video"
        configuration.networkTimeout = .seconds(7)
        configuration.snapcast = SnapcastOutput(host: "::1", port: 4953)
        return configuration
    }
}

private enum RequestKind: CaseIterable {
    case hello, configure, command, read, probe
    init(_ value: EngineRequest) {
        switch value {
        case .hello: self = .hello
        case .configure: self = .configure
        case .command: self = .command
        case .read: self = .read
        case .probe: self = .probe
        }
    }
    func sample() throws -> EngineRequest {
        switch self {
        case .hello: .hello(version: EngineWire.version)
        case .configure: .configure(Samples.configuration)
        case .command: .command(1, .setPlaying(true))
        case .read: .read(9, try Samples.uri())
        case .probe: .probe(10)
        }
    }
}

private enum ReportKind: CaseIterable {
    case hello, ready, failedToStart, done, waiting, probed, event, readDone, readFailed, refused
    init(_ value: EngineReport) {
        switch value {
        case .hello: self = .hello
        case .ready: self = .ready
        case .failedToStart: self = .failedToStart
        case .done: self = .done
        case .waiting: self = .waiting
        case .probed: self = .probed
        case .event: self = .event
        case .readDone: self = .readDone
        case .readFailed: self = .readFailed
        case .refused: self = .refused
        }
    }
    func sample() throws -> EngineReport {
        switch self {
        case .hello: .hello(version: EngineWire.version)
        case .ready: .ready(EngineSetUp(audioSinkDescription: "autoaudiosink (pulsesink)"),
                            MediaCapabilities(supportedURISchemes: ["file", "http"], supportedMIMETypes: ["audio/flac"], playableExtensions: ["flac"]))
        case .failedToStart: .failedToStart("GStreamer element 'playbin3' is not installed")
        case .done: .done(11)
        case .waiting: .waiting(what: "a pipeline's teardown", bound: .seconds(3))
        case .probed: .probed(12, .milliseconds(2500))
        case .event: .event(Generation(1), .endOfStream)
        case .readDone: .readDone(9, DiscoveredMedia(metadata: Samples.metadata, duration: .seconds(200), isSeekable: true, isLive: false))
        case .readFailed: .readFailed(9, ItemError(.notFound, "no such file"))
        case .refused: .refused("cannot read the line 'x'")
        }
    }
}

private enum CommandKind: CaseIterable {
    case load, prepareNext, setPlaying, playAfterPreroll, release, seek, setVolume, setMuted, fade, video, audio, setOutput, crossfade
    init(_ value: EngineCommand) {
        switch value {
        case .load: self = .load
        case .prepareNext: self = .prepareNext
        case .setPlaying: self = .setPlaying
        case .playAfterPreroll: self = .playAfterPreroll
        case .release: self = .release
        case .seek: self = .seek
        case .setVolume: self = .setVolume
        case .setMuted: self = .setMuted
        case .fade: self = .fade
        case .video: self = .video
        case .audio: self = .audio
        case .setOutput: self = .setOutput
        case .crossfade: self = .crossfade
        }
    }
    func sample() throws -> EngineCommand {
        switch self {
        case .load: .load(try Samples.uri(), Generation(8))
        case .prepareNext: .prepareNext(try MediaURI(Samples.remote), Generation(9))
        case .setPlaying: .setPlaying(false)
        case .playAfterPreroll: .playAfterPreroll(true)
        case .release: .release
        case .seek: .seek(.position(.milliseconds(1500)), .fast(before: .seconds(1), after: .zero), rate: 1.5)
        case .setVolume: .setVolume(0.25)
        case .setMuted: .setMuted(true)
        case .fade: .fade(to: 0.25, over: .milliseconds(9_950))
        case .video: .video(.raise)
        case .audio: .audio(.replayGainOff)
        case .setOutput: .setOutput("alsa_output.usb-dac")
        case .crossfade: .crossfade(.cancel)
        }
    }
}

private enum EventKind: CaseIterable {
    case stateChanged, asyncDone, streamStarted, live, endOfStream, failed, tags, buffering, loaded, durationChanged
    case requestState, seekRefused, seekDone, gap, video, outputs, streamLevels, chapters
    init(_ value: EngineEvent) {
        switch value {
        case .stateChanged: self = .stateChanged
        case .asyncDone: self = .asyncDone
        case .streamStarted: self = .streamStarted
        case .live: self = .live
        case .endOfStream: self = .endOfStream
        case .failed: self = .failed
        case .tags: self = .tags
        case .buffering: self = .buffering
        case .loaded: self = .loaded
        case .durationChanged: self = .durationChanged
        case .requestState: self = .requestState
        case .seekRefused: self = .seekRefused
        case .seekDone: self = .seekDone
        case .gap: self = .gap
        case .video: self = .video
        case .outputs: self = .outputs
        case .streamLevels: self = .streamLevels
        case .chapters: self = .chapters
        }
    }
    func sample() throws -> EngineEvent {
        switch self {
        case .stateChanged: .stateChanged(.paused, pending: .playing, position: try Samples.position())
        case .asyncDone: .asyncDone(try Samples.snapshot())
        case .streamStarted: .streamStarted(nil)
        case .live: .live
        case .endOfStream: .endOfStream
        case .failed: .failed(ItemError(.network, "HTTP 500", isTransient: true))
        case .tags: .tags(Samples.metadata)
        case .buffering: .buffering(percent: 40, loadedRanges: [TimeRange(start: .zero, end: .seconds(4))])
        case .loaded: .loaded([TimeRange(start: .zero, end: .seconds(9))])
        case .durationChanged: .durationChanged(.seconds(61))
        case .requestState: .requestState(.paused)
        case .seekRefused: .seekRefused
        case .seekDone: .seekDone(try Samples.position())
        case .gap: .gap(at: .seconds(6), length: .seconds(2))
        case .video: .video(.windowGone)
        case .outputs: .outputs([OutputDevice(id: "dac", description: "USB DAC", kind: "pulse")])
        case .streamLevels: .streamLevels(volume: 0.5, muted: false, fading: true)
        // the last chapter's end not in the file: no key
        case .chapters: .chapters([Chapter(start: .zero, end: .seconds(5), title: "Opening"),
                                   Chapter(start: .seconds(90), end: nil, title: "Zwölf")])
        }
    }
}

private enum VideoCommandKind: CaseIterable {
    case setTitle, setFullscreen, raise, controls, setGravity, setPictureInPicture
    init(_ value: VideoCommand) {
        switch value {
        case .setTitle: self = .setTitle
        case .setFullscreen: self = .setFullscreen
        case .raise: self = .raise
        case .controls: self = .controls
        case .setGravity: self = .setGravity
        case .setPictureInPicture: self = .setPictureInPicture
        }
    }
    var sample: VideoCommand {
        switch self {
        case .setTitle: .setTitle("Film \u{1F3AC}")
        case .setFullscreen: .setFullscreen(true)
        case .raise: .raise
        case .controls: .controls("▶ 0:01 / 1:00")
        case .setGravity: .setGravity(.fill)
        case .setPictureInPicture: .setPictureInPicture(true)
        }
    }
}

private enum VideoEventKind: CaseIterable {
    case windowOpened, windowFullscreen, windowClosed, windowGone, pointerMoved, input
    init(_ value: VideoEvent) {
        switch value {
        case .windowOpened: self = .windowOpened
        case .windowFullscreen: self = .windowFullscreen
        case .windowClosed: self = .windowClosed
        case .windowGone: self = .windowGone
        case .pointerMoved: self = .pointerMoved
        case .input: self = .input
        }
    }
    var sample: VideoEvent {
        switch self {
        case .windowOpened: .windowOpened(VideoSize(width: 1920, height: 1080))
        case .windowFullscreen: .windowFullscreen(true)
        case .windowClosed: .windowClosed
        case .windowGone: .windowGone
        case .pointerMoved: .pointerMoved
        case .input: .input(.playPause)
        }
    }
}

private enum WindowInputKind: CaseIterable {
    case playPause, toggleFullscreen, leaveFullscreen, seek, changeVolume, toggleMute, togglePictureInPicture, drop
    init(_ value: WindowInput) {
        switch value {
        case .playPause: self = .playPause
        case .toggleFullscreen: self = .toggleFullscreen
        case .leaveFullscreen: self = .leaveFullscreen
        case .seek: self = .seek
        case .changeVolume: self = .changeVolume
        case .toggleMute: self = .toggleMute
        case .togglePictureInPicture: self = .togglePictureInPicture
        case .drop: self = .drop
        }
    }
    var sample: WindowInput {
        switch self {
        case .playPause: .playPause
        case .toggleFullscreen: .toggleFullscreen
        case .leaveFullscreen: .leaveFullscreen
        case .seek: .seek(by: .seconds(-5))
        case .changeVolume: .changeVolume(byPercent: -5)
        case .toggleMute: .toggleMute
        case .togglePictureInPicture: .togglePictureInPicture
        case .drop: .drop(["/a b.ogg", "https://example.org/x"])
        }
    }
}

private enum AudioCommandKind: CaseIterable {
    case replayGain, replayGainOff, nextAlbumMode, equalizer
    init(_ value: AudioCommand) {
        switch value {
        case .replayGain: self = .replayGain
        case .replayGainOff: self = .replayGainOff
        case .nextAlbumMode: self = .nextAlbumMode
        case .equalizer: self = .equalizer
        }
    }
    var sample: AudioCommand {
        switch self {
        case .replayGain: .replayGain(albumMode: true, preamp: -3.5)
        case .replayGainOff: .replayGainOff
        case .nextAlbumMode: .nextAlbumMode(nil)
        case .equalizer: .equalizer([-3.5, 0, 12])
        }
    }
}

private enum CrossfadeCommandKind: CaseIterable {
    case prepare, start, cancel
    init(_ value: CrossfadeCommand) {
        switch value {
        case .prepare: self = .prepare
        case .start: self = .start
        case .cancel: self = .cancel
        }
    }
    func sample() throws -> CrossfadeCommand {
        switch self {
        case .prepare: .prepare(try Samples.uri(), Generation(10))
        case .start: .start(length: .seconds(6))
        case .cancel: .cancel
        }
    }
}
