import EngineLink
import Foundation
import PlayerModel
import XCTest

/// What crosses between tonearmd and its engine's process (EngineLink/EngineWire.swift) comes out
/// as it went in: one line each, whatever the bytes of a file's name or the text of a tag.
final class EngineWireTests: XCTestCase {
    private func roundTrip<T: Codable & Equatable>(_ value: T, file: StaticString = #filePath, line: UInt = #line) throws {
        let bytes = try EngineWire.line(value)
        XCTAssertEqual(bytes.last, UInt8(ascii: "\n"), file: file, line: line)
        XCTAssertEqual(bytes.filter { $0 == UInt8(ascii: "\n") }.count, 1, "one line", file: file, line: line)
        XCTAssertEqual(try EngineWire.decode(T.self, from: bytes.dropLast()), value, file: file, line: line)
    }

    func testCommandsAndEventsComeOutAsTheyWentIn() throws {
        let latin1 = MediaURI(filePath: Array("/music/caf".utf8) + [0xE9] + Array(".ogg".utf8))
        let spaced = try MediaURI("/music/a b/%25 #1?.flac")
        for uri in [latin1, spaced, try MediaURI("https://example.org/live/index.m3u8?token=a%20b")] {
            try roundTrip(EngineRequest.command(1, .load(uri, Generation(7))))
            try roundTrip(EngineRequest.read(3, uri))
        }
        XCTAssertEqual(try EngineWire.decode(MediaURI.self, from: try EngineWire.line(latin1).dropLast()).pathBytes, latin1.pathBytes,
                       "a Latin-1 file name keeps its bytes")
        try roundTrip(EngineRequest.command(1, .seek(.position(.milliseconds(1500)), .fast(before: .seconds(1), after: .zero), rate: 1.5)))
        try roundTrip(EngineRequest.command(1, .audio(.equalizer([-3.5, 0, 12]))))
        try roundTrip(EngineRequest.command(1, .fade(to: 0, over: .milliseconds(9_950))))
        try roundTrip(EngineRequest.command(1, .fade(to: 1, over: .zero)))
        try roundTrip(EngineRequest.command(1, .video(.setTitle("a\nline\u{0}feed \u{1F3B5}"))))
        var configuration = EngineConfiguration(pipeline: .playbin3, audioSink: "wavenc ! filesink location=\"out\nput.wav\"")
        configuration.snapcast = SnapcastOutput(host: "::1", port: 4953)
        try roundTrip(EngineRequest.configure(configuration))

        let sample = PositionSample(.nanoseconds(123_456_789), at: .now)
        var metadata = Metadata()
        metadata.title = "Title \"quoted\" \n second line"
        metadata.artists = ["A", "B"]
        metadata.coverURL = URL(fileURLWithPath: "/tmp/covers/ab cd.jpg")
        let snapshot = EngineSnapshot(position: sample, duration: .seconds(180), isSeekable: true,
                                      loadedRanges: [TimeRange(start: .zero, end: .seconds(3))], streamWakesWhilePaused: true)
        // an MP3 without a Xing header at its preroll: no duration, an estimate
        let estimated = EngineSnapshot(position: sample, duration: nil, isSeekable: true, loadedRanges: [],
                                       durationEstimate: .nanoseconds(4_693_296_000))
        for event: EngineEvent in [.stateChanged(.paused, pending: .playing, position: sample), .asyncDone(snapshot), .asyncDone(estimated),
                                   .tags(metadata),
                                   .failed(ItemError(.network, "HTTP 500", isTransient: true)), .video(.input(.drop(["/a b", "c\nd"]))),
                                   .outputs([OutputDevice(id: "dac", description: "USB DAC", kind: "pulse")]), .endOfStream] {
            try roundTrip(EngineReport.event(Generation(.max), event))
        }
        try roundTrip(EngineReport.readDone(9, DiscoveredMedia(metadata: metadata, duration: nil, isSeekable: false, isLive: true)))
    }

    /// An instant read in one process is the same instant in the other (one monotonic clock).
    func testAPositionSampleKeepsItsInstant() throws {
        let sample = PositionSample(.seconds(2), at: .now)
        let back = try EngineWire.decode(PositionSample.self, from: try EngineWire.line(sample).dropLast())
        XCTAssertEqual(back.instant, sample.instant)
    }

    func testLinesSplitWhereverTheReadsEnd() {
        var lines = EngineWire.Lines()
        XCTAssertEqual(lines.append(Array("{\"a\"".utf8)[...]), [])
        XCTAssertEqual(lines.append(Array(":1}\n{\"b\":2}\n{".utf8)[...]).map { String(decoding: $0, as: UTF8.self) }, ["{\"a\":1}", "{\"b\":2}"])
        XCTAssertEqual(lines.append(Array("}\n".utf8)[...]).map { String(decoding: $0, as: UTF8.self) }, ["{}"])
        XCTAssertEqual(lines.append([][...]), [])
    }
}
