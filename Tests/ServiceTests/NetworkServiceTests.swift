import Foundation
import TestSupport
import XCTest

/// Network streams as a client sees them over D-Bus (issue 12): live HLS, and the faults of a
/// server that answers errors or is not there. The streams are served by `HTTPServer` on 127.0.0.1
/// from media generated here.
final class NetworkServiceTests: ServiceTestCase {
    typealias H = ServiceHarness

    /// A 20 s HLS stream in ten segments of about 2 s, made once for the class.
    func hlsFolder() throws -> (generator: MediaGenerator, segments: [String]) {
        let generator = try media.generator
        let index = generator.url("hls/index.m3u8")
        if !FileManager.default.fileExists(atPath: index.path) {
            _ = try generator.hlsStream("hls", seconds: 20, segments: 10)
        }
        let segments = try String(contentsOf: index, encoding: .utf8).split(separator: "\n")
            .filter { $0.hasSuffix(".ts") }.map(String.init)
        XCTAssertEqual(segments.count, 10)
        return (generator, segments)
    }

    /// How long a call took to be answered.
    func timed(_ body: () throws -> Void) rethrows -> TimeInterval {
        let start = Date()
        try body()
        return Date().timeIntervalSince(start)
    }

    func testALiveHLSPlaylistIsLiveCannotSeekHasNoLengthAndRefusesARate() throws {
        let (generator, segments) = try hlsFolder()
        let server = try HTTPServer(directory: generator.directory)
        try server.liveHLS(at: "hls/live.m3u8", segments: segments, segmentSeconds: 2)
        let mark = harness.mark()
        try harness.start([server.url("hls/live.m3u8")])
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay")
        try harness.waitForChange(H.extensionInterface, "IsLive true", from: mark) { $0["IsLive"]?.bool == true }
        try harness.waitForChange(H.extensionInterface, "TimeControlStatus playing", from: mark) {
            $0["TimeControlStatus"]?.string == "playing"
        }
        XCTAssertEqual(try harness.get(H.extensionInterface, "IsLive").bool, true)
        XCTAssertEqual(try harness.get(H.player, "CanSeek").bool, false)
        let metadata = try harness.metadata
        XCTAssertNil(metadata["mpris:length"], "a live stream has no length: \(metadata)")
        XCTAssertEqual(metadata["xesam:url"]?.string, server.url("hls/live.m3u8"))
        // it is played as live: the playlist is fetched again as it grows
        XCTAssertTrue(server.waitForRequests("hls/live.m3u8", count: 2, timeout: 10), "\(server.requests)")

        // a rate other than 1.0 cannot be played on it: refused, saying why, and Rate stays 1.0
        let rateMark = harness.mark()
        let error = try harness.errorReply(H.properties, "Set", ["string:\(H.player)", "string:Rate", "variant:double:1.5"])
        XCTAssertEqual(error?.name, H.errorPrefix + "RateNotSupported")
        XCTAssertTrue(error?.message.contains("live stream") == true, "\(error?.description ?? "no error")")
        let refused = try harness.waitForSignal(H.extensionInterface, "RateChanged", from: rateMark)
        XCTAssertEqual(refused.arguments.first?.double, 1.0)
        XCTAssertEqual(refused.arguments.last?.string, "refused")
        XCTAssertEqual(try harness.get(H.player, "Rate").double, 1.0)
        XCTAssertFalse(harness.propertiesChanged(H.player, from: rateMark).contains { $0.changed["Rate"] != nil },
                       "Rate was announced as changed")
        XCTAssertEqual(try harness.playbackStatus, "Playing")
        XCTAssertEqual(try harness.get(H.extensionInterface, "TimeControlStatus").string, "playing")
    }

    func testALiveHLSPlaylistWithAWideWindowSeeksInsideItAndStaysLive() throws {
        let generator = try media.generator
        let index = generator.url("hls-dvr/index.m3u8")
        if !FileManager.default.fileExists(atPath: index.path) {
            _ = try generator.hlsStream("hls-dvr", seconds: 80, segments: 40)
        }
        let segments = try String(contentsOf: index, encoding: .utf8).split(separator: "\n")
            .filter { $0.hasSuffix(".ts") }.map(String.init)
        let server = try HTTPServer(directory: generator.directory)
        // 16 segments of 2 s: 32 s of playlist, and a seekable window of about 26 s (hlsdemux ends
        // it three target durations before the live edge), wider than the 20 s minimum
        try server.liveHLS(at: "hls-dvr/live.m3u8", segments: segments, segmentSeconds: 2, window: 16)
        let mark = harness.mark()
        try harness.start([server.url("hls-dvr/live.m3u8")])
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay")
        try harness.waitForChange(H.extensionInterface, "TimeControlStatus playing", from: mark) {
            $0["TimeControlStatus"]?.string == "playing"
        }
        XCTAssertEqual(try harness.get(H.extensionInterface, "IsLive").bool, true)
        XCTAssertEqual(try harness.get(H.player, "CanSeek").bool, true)
        XCTAssertNil(try harness.metadata["mpris:length"], "a live stream has no length")
        let track = try XCTUnwrap(try harness.trackID)

        // 10 s back, inside the window: it plays from there, still live
        let position = try harness.position
        XCTAssertGreaterThan(position, 10_000_000, "it joined near the live edge, with a window behind it")
        let backMark = harness.mark()
        try harness.call(H.player, "SetPosition", "ox", [track, String(position - 10_000_000)])
        let back = try harness.waitForSeeked(from: backMark)
        XCTAssertEqual(Double(back), Double(position - 10_000_000), accuracy: 2_100_000, "within a segment of the target")
        try harness.waitForChange(H.extensionInterface, "TimeControlStatus playing after the seek", from: backMark) {
            $0["TimeControlStatus"]?.string == "playing"
        }
        // an hour ahead is past the live edge: it goes to the edge, not nowhere
        let edgeMark = harness.mark()
        try harness.call(H.player, "SetPosition", "ox", [track, "3600000000"])
        let edge = try harness.waitForSeeked(from: edgeMark)
        XCTAssertGreaterThan(edge, back + 5_000_000)
        XCTAssertLessThan(edge, 80_000_000)
        try harness.waitForChange(H.extensionInterface, "TimeControlStatus playing at the edge", from: edgeMark) {
            $0["TimeControlStatus"]?.string == "playing"
        }
        XCTAssertGreaterThanOrEqual(try harness.position, edge)
        XCTAssertEqual(try harness.get(H.extensionInterface, "IsLive").bool, true)
        XCTAssertEqual(try harness.playbackStatus, "Playing")
        XCTAssertFalse(harness.watcher.messages(from: mark).contains { $0.member == "ItemFailed" })
    }

    func testALiveStreamWhosePlaylistGoesAwayReconnectsAtTheLiveEdge() throws {
        let (generator, segments) = try hlsFolder()
        let server = try HTTPServer(directory: generator.directory)
        try server.liveHLS(at: "hls/live.m3u8", segments: segments, segmentSeconds: 2)
        let mark = harness.mark()
        try harness.start(["--reconnect-delay", "0.5", server.url("hls/live.m3u8")])
        try harness.waitForChange(H.extensionInterface, "TimeControlStatus playing", from: mark, timeout: 15) {
            $0["TimeControlStatus"]?.string == "playing"
        }
        // the playlist answers 503 for a while: the stream runs dry, reconnects, and plays on live
        let outage = harness.mark()
        try server.fault("hls/live.m3u8", .init(status: 503, times: 6))
        try harness.waitForChange(H.extensionInterface, "WaitingReason reconnecting", from: outage, timeout: 40) {
            $0["WaitingReason"]?.string == "reconnecting"
        }
        try harness.waitForChange(H.extensionInterface, "TimeControlStatus playing again", from: outage, timeout: 40) {
            $0["TimeControlStatus"]?.string == "playing"
        }
        XCTAssertFalse(harness.watcher.messages(from: mark).contains { $0.member == "ItemFailed" })
        XCTAssertEqual(try harness.get(H.extensionInterface, "IsLive").bool, true)
        XCTAssertEqual(try harness.playbackStatus, "Playing")
        XCTAssertFalse(harness.watcher.messages(from: outage).contains { $0.member == "Seeked" }, "a live stream resumes at its edge, not by a seek")
    }

    /// Waits for ItemFailed and checks what a client sees: the signal, ItemStatus and ItemError,
    /// all saying network and naming `url` and `status`.
    func assertNetworkFailure(from mark: Int, naming url: String, status: String?, timeout: TimeInterval = 30,
                              file: StaticString = #filePath, line: UInt = #line) throws {
        let failed = try harness.waitForSignal(H.extensionInterface, "ItemFailed", from: mark, timeout: timeout)
        XCTAssertEqual(failed.arguments.count, 3, file: file, line: line)
        XCTAssertEqual(failed.arguments[1].string, H.errorPrefix + "NetworkError", "\(failed)", file: file, line: line)
        let message = failed.arguments[2].string ?? ""
        XCTAssertTrue(message.contains(url), "the message names \(url): \(message)", file: file, line: line)
        if let status {
            XCTAssertTrue(message.contains(status), "the message names \(status): \(message)", file: file, line: line)
        }
        XCTAssertEqual(try harness.get(H.extensionInterface, "ItemStatus").string, "failed", file: file, line: line)
        let itemError = try harness.get(H.extensionInterface, "ItemError")
        XCTAssertEqual((itemError.data as? [Any])?.first as? String, H.errorPrefix + "NetworkError", file: file, line: line)
        XCTAssertFalse(harness.watcher.messages(from: mark).contains { $0.member == "PlayedToEnd" },
                       "a stream that failed did not play to its end", file: file, line: line)
    }

    /// After a failure the transport still answers at once, and Play tries the item again.
    func assertStillAnswers(file: StaticString = #filePath, line: UInt = #line) throws {
        for method in ["Play", "Next", "Stop", "Play", "Stop"] {
            let took = try timed { try harness.call(H.player, method) }
            XCTAssertLessThan(took, 2, "\(method) took \(took) s", file: file, line: line)
        }
        try harness.waitForStatus("Stopped")
    }

    func testASegmentAnsweringHTTP404FailsTheItemAtOnce() throws {
        let (generator, segments) = try hlsFolder()
        let server = try HTTPServer(directory: generator.directory)
        try server.fault("hls/\(segments[3])", .init(status: 404))
        let mark = harness.mark()
        try harness.start([server.url("hls/index.m3u8")])
        let playbin3 = ProcessInfo.processInfo.environment["TONEARM_TEST_PIPELINE"] == "playbin3"
        try assertNetworkFailure(from: mark, naming: server.url(playbin3 ? "hls/index.m3u8" : "hls/\(segments[3])"),
                                 status: playbin3 ? nil : "HTTP 404 (Not Found)", timeout: playbin3 ? 90 : 30)
        // a 404 will not go away: no reconnect
        XCTAssertFalse(harness.propertiesChanged(H.extensionInterface, from: mark).contains {
            $0.changed["WaitingReason"]?.string == "reconnecting"
        })
        try harness.waitForStatus("Stopped")
        try assertStillAnswers()
    }

    /// A stream that fails while it prerolls, opened again and again: each failed pipeline is torn
    /// down while its decoder's pad may still be on its way out. playbin3 1.22.0 aborted tonearmd
    /// in about 1 of 6 such teardowns (reconfigure_output's assertion, see GStreamerEngine.stop),
    /// so a dozen in a row catch it nearly every run.
    func testAStreamFailingAsItStartsCanBeOpenedAgainAndAgain() throws {
        let (generator, segments) = try hlsFolder()
        let server = try HTTPServer(directory: generator.directory)
        try server.fault("hls/\(segments[1])", .init(status: 404))
        var mark = harness.mark()
        try harness.start([server.url("hls/index.m3u8")])
        // legacy playbin (the default before 1.24) never aborted here and takes about 2 s a
        // failure: a few attempts suffice
        let playbin3 = ProcessInfo.processInfo.environment["TONEARM_TEST_PIPELINE"] == "playbin3"
        for attempt in 1...(playbin3 ? 12 : 3) {
            _ = try harness.waitForSignal(H.extensionInterface, "ItemFailed", from: mark, timeout: 60)
            try harness.waitForStatus("Stopped")
            XCTAssertTrue(harness.daemon.isRunning, "tonearmd ended after attempt \(attempt)")
            mark = harness.mark()
            // a new item for the same stream each time: Play on a failed item with nothing after
            // it does not load it again (and Retry has a budget)
            try harness.call(H.player, "OpenUri", "s", [server.url("hls/index.m3u8")])
        }
        _ = try harness.waitForSignal(H.extensionInterface, "ItemFailed", from: mark, timeout: 60)
        try harness.ping()
        XCTAssertTrue(harness.daemon.isRunning)
        XCTAssertEqual(try harness.get(H.extensionInterface, "ItemStatus").string, "failed")
    }

    func testASegmentAnsweringHTTP500FailsTheItemNamingItsURLAndStatus() throws {
        let (generator, segments) = try hlsFolder()
        let server = try HTTPServer(directory: generator.directory)
        try server.fault("hls/\(segments[3])", .init(status: 500))
        let mark = harness.mark()
        // legacy playbin's hlsdemux fetches segments with souphttpsrc, whose responses name the
        // segment and its status, and ends the stream after a few tries; playbin3's hlsdemux2
        // (1.22.0) downloads on its own, reports neither, and retries for minutes while buffering
        // at 0%: there the stall timeout (short here) is what gives up
        let playbin3 = ProcessInfo.processInfo.environment["TONEARM_TEST_PIPELINE"] == "playbin3"
        // a 500 may go away: one reconnect, which meets the same answer
        try harness.start(["--reconnect-attempts", "1", "--reconnect-delay", "0.2"] + (playbin3 ? ["--stall-timeout", "5"] : [])
                          + [server.url("hls/index.m3u8")])
        try harness.waitForStatus("Playing")
        try assertNetworkFailure(from: mark, naming: server.url(playbin3 ? "hls/index.m3u8" : "hls/\(segments[3])"),
                                 status: playbin3 ? nil : "HTTP 500 (Internal Server Error)", timeout: 40)
        XCTAssertTrue(server.waitForRequests("hls/\(segments[3])", status: 500))
        XCTAssertEqual(harness.propertiesChanged(H.extensionInterface, from: mark)
            .filter { $0.changed["WaitingReason"]?.string == "reconnecting" }.count, 1)
        // nothing follows it in the queue: the player stopped there
        try harness.waitForStatus("Stopped")
        try assertStillAnswers()
    }

    /// A segment answered with 200 and bytes that are not media. Legacy playbin's hlsdemux skips it
    /// without a word: the service plays on over the gap, as mpv does, and says what was missed
    /// with GapSkipped (and in its log); the item does not fail. playbin3 cannot play on.
    func testASegmentThatIsNotMediaIsSkippedAndReported() throws {
        let (generator, segments) = try hlsFolder()
        let server = try HTTPServer(directory: generator.directory)
        try server.fault("hls/\(segments[3])", .init(garbage: true))
        let mark = harness.mark()
        try harness.start([server.url("hls/index.m3u8")])
        try harness.waitForStatus("Playing")
        if ProcessInfo.processInfo.environment["TONEARM_TEST_PIPELINE"] == "playbin3" {
            // playbin3's hlsdemux2 (1.22.0) stops the stream there with "Internal data stream
            // error": nothing after the segment can play, and the item fails
            try assertNetworkFailure(from: mark, naming: server.url("hls/index.m3u8"), status: nil, timeout: 60)
            XCTAssertFalse(harness.watcher.messages(from: mark).contains { $0.member == "GapSkipped" })
            return
        }
        let gap = try harness.waitForSignal(H.extensionInterface, "GapSkipped", from: mark, timeout: 30)
        XCTAssertEqual(gap.arguments.first?.string, try harness.trackID)
        let position = Double(gap.arguments[1].int64 ?? -1) / 1e6, length = Double(gap.arguments[2].int64 ?? -1) / 1e6
        // segment 3 of ten in 20 s: from about 6 s, about 2 s long
        XCTAssertEqual(position, 6, accuracy: 0.8, "\(gap)")
        XCTAssertEqual(length, 2, accuracy: 0.8, "\(gap)")
        try harness.waitForSignal(H.extensionInterface, "PlayedToEnd", from: mark, timeout: 40)
        XCTAssertFalse(harness.watcher.messages(from: mark).contains { $0.member == "ItemFailed" })
        XCTAssertTrue(harness.logs.contains("never came"), "the log tells it")
    }

    func testAPlaylistAnswering404FailsTheItem() throws {
        let (generator, _) = try hlsFolder()
        let server = try HTTPServer(directory: generator.directory)
        try server.fault("hls/index.m3u8", .init(status: 404))
        let mark = harness.mark()
        try harness.start([server.url("hls/index.m3u8")])
        try assertNetworkFailure(from: mark, naming: server.url("hls/index.m3u8"), status: "HTTP 404 (Not Found)")
        try assertStillAnswers()
    }

    func testGarbageInsteadOfAPlaylistFailsTheItem() throws {
        let (generator, _) = try hlsFolder()
        let server = try HTTPServer(directory: generator.directory)
        try server.fault("hls/index.m3u8", .init(garbage: true))
        let mark = harness.mark()
        try harness.start([server.url("hls/index.m3u8")])
        try assertNetworkFailure(from: mark, naming: server.url("hls/index.m3u8"), status: "HTTP 200")
        try assertStillAnswers()
    }

    func testAnUnreachableServerFailsTheItem() throws {
        // a port nothing listens on: bound, then closed
        let port = try SnapServer.freePort()
        let url = "http://127.0.0.1:\(port)/radio.mp3"
        let mark = harness.mark()
        try harness.start([url])
        try assertNetworkFailure(from: mark, naming: url, status: nil)
        try assertStillAnswers()
    }
}

/// Reconnecting after a dropped connection, as a client sees it (issue 12).
final class ReconnectServiceTests: ServiceTestCase {
    typealias H = ServiceHarness

    /// A WAV of `seconds` (10 s: 1.7 MB) served by a fresh server; its path on the server.
    func served(seconds: Double = 10) throws -> (HTTPServer, String) {
        let file = try short("net\(Int(seconds))", seconds: seconds)
        return (try HTTPServer(directory: file.deletingLastPathComponent()), file.lastPathComponent)
    }

    /// The faults for the first two requests of a WAV file served at `bytesPerSecond`, which pass:
    /// tonearmd downloads an HTTP file through a downloadbuffer, which lets wavparse read in pull
    /// mode, and wavparse reads the chunks after the audio first. The first answer is cut short
    /// by that read of the file's tail (the second request, a range); the third, a range from
    /// where the first stopped, carries the stream, and the faults after these two are for it.
    func opening(_ bytesPerSecond: Int) -> HTTPServer.Fault {
        .init(bytesPerSecond: bytesPerSecond, times: 2)
    }

    /// The values `property` of the extension took in PropertiesChanged from `mark`, in order.
    func values(of property: String, from mark: Int) -> [String] {
        harness.propertiesChanged(H.extensionInterface, from: mark).compactMap { $0.changed[property]?.string }
    }

    func testADroppedConnectionReconnectsAndResumesWhereItWas() throws {
        // a sanitized tonearmd judges 200 kB/s too slow to keep up with 176 kB/s of audio (under
        // ASan it was still buffering when the drop came, and rightly resumed at 0): there the
        // stream comes at 300 kB/s, is three times as long and drops three times as late
        let scale = H.slowdown > 1 ? 3 : 1
        let rate = scale > 1 ? 300_000 : 200_000
        let (server, path) = try served(seconds: 10 * Double(scale))
        // the first answer comes a little faster than it plays and stops after 1 MB (5.7 s of
        // audio, after about 5 s), then the server is down for three requests
        try server.fault(path, [opening(rate), .init(dropAfter: 1_000_000 * scale, bytesPerSecond: rate, times: 1),
                                .init(status: 503, times: 3)])
        let mark = harness.mark()
        try harness.start(["--reconnect-delay", "0.2", server.url(path)])
        try harness.waitForStatus("Playing")
        try harness.waitForChange(H.extensionInterface, "WaitingReason reconnecting", from: mark, timeout: 10 * Double(scale)) {
            $0["WaitingReason"]?.string == "reconnecting"
        }
        let seeked = try harness.waitForSeeked(from: mark, timeout: 20 * Double(scale))
        XCTAssertGreaterThan(seeked, 1_000_000, "it resumed where it was, not at the start")
        XCTAssertLessThan(seeked, 5_700_000 * Int64(scale), "it resumed no later than what had arrived")
        let ended = try harness.waitForSignal(H.extensionInterface, "PlayedToEnd", from: mark, timeout: 30 * Double(scale))
        let messages = harness.watcher.messages(from: mark).filter { $0.index < ended.index }
        XCTAssertFalse(messages.contains { $0.member == "ItemFailed" }, "the item did not fail")
        let statuses = harness.propertiesChanged(H.player, from: mark).filter { $0.index < ended.index }
            .compactMap { $0.changed["PlaybackStatus"]?.string }
        XCTAssertEqual(statuses, ["Playing"], "PlaybackStatus stays Playing while it reconnects")
        // what the transport did: played, waited to reconnect, played again
        let controls = values(of: "TimeControlStatus", from: mark)
        let firstPlaying = try XCTUnwrap(controls.firstIndex(of: "playing"), "\(controls)")
        let waiting = try XCTUnwrap(controls[firstPlaying...].firstIndex(of: "waitingToPlay"), "\(controls)")
        XCTAssertTrue(controls[waiting...].contains("playing"), "\(controls)")
        XCTAssertEqual(server.requests.filter { $0.status == 503 }.count, 3, "\(server.requests)")
    }

    func testASlowServerBuffersWhileStillPlaying() throws {
        let (server, path) = try served()
        // 80 kB/s for 176 kB/s of audio: the buffer runs dry while it plays and must refill (at
        // 120 kB/s playbin3, which buffers more before it starts, plays the rest without one)
        try server.fault(path, .init(bytesPerSecond: 80_000))
        let mark = harness.mark()
        try harness.start([server.url(path)])
        try harness.waitForStatus("Playing")
        try harness.waitForChange(H.extensionInterface, "TimeControlStatus playing", from: mark, timeout: 20) {
            $0["TimeControlStatus"]?.string == "playing"
        }
        let playing = harness.mark()
        // a refill: waiting for buffering, the percent moving, then playing at 100%
        try harness.waitForChange(H.extensionInterface, "WaitingReason buffering", from: playing, timeout: 20) {
            $0["WaitingReason"]?.string == "buffering"
        }
        let resumed = try harness.waitForChange(H.extensionInterface, "TimeControlStatus playing again", from: playing, timeout: 20) {
            $0["TimeControlStatus"]?.string == "playing"
        }
        let percents = harness.propertiesChanged(H.extensionInterface, from: playing).filter { $0.index <= resumed.index }
            .compactMap { $0.changed["BufferingPercent"]?.int64 }
        XCTAssertTrue(percents.contains { $0 < 50 } && percents.last == 100, "BufferingPercent moved up to 100: \(percents)")
        XCTAssertEqual(try harness.get(H.extensionInterface, "BufferingPercent").int64, 100)
        // announced in steps, not queue2's every point (nor its 0/1 flapping)
        for (before, after) in zip(percents, percents.dropFirst()) where after != 100 {
            XCTAssertGreaterThanOrEqual(abs(after - before), 5, "\(percents)")
        }
        let statuses = harness.propertiesChanged(H.player, from: mark).compactMap { $0.changed["PlaybackStatus"]?.string }
        XCTAssertEqual(statuses, ["Playing"], "PlaybackStatus stays Playing while it buffers")
    }

    /// `LoadedRanges` from a PropertiesChanged as (start, end) pairs in microseconds; nil when it
    /// is not an array.
    func ranges(_ value: MonitorValue?) -> [[Int64]]? {
        guard case .array(let pairs)? = value?.unwrapped else { return nil }
        return pairs.compactMap { pair in
            guard case .structure(let fields) = pair else { return nil }
            return fields.compactMap(\.int64)
        }
    }

    /// The files (not folders: GStreamer's registry, the covers) in the service's cache directory.
    func cacheFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: harness.cacheHome.path).filter {
            var folder: ObjCBool = false
            return FileManager.default.fileExists(atPath: harness.cacheHome.appendingPathComponent($0).path, isDirectory: &folder) && !folder.boolValue
        }
    }

    func testAnHTTPFilesLoadedRangesGrowAsItDownloadsAndASeekInsideThemWorks() throws {
        let (server, path) = try served()
        // 400 kB/s for 176 kB/s of audio: the whole 10 s file in about 4.5 s, most of it after
        // the first buffering reached 100% (downloadbuffer's 2 s read-ahead), when no BUFFERING
        // message comes any more. Sanitized, tonearmd starts several times slower: the download is
        // slowed too, so that it still starts first, but at most to 200 kB/s: slower than the
        // audio plays (176 kB/s) it buffers all along, announcing each BufferingPercent step
        let slower = min(H.slowdown, 2)
        try server.fault(path, .init(bytesPerSecond: Int(400_000 / slower)))
        let mark = harness.mark()
        try harness.start([server.url(path)])
        try harness.waitForStatus("Playing")
        let whole = try harness.waitForChange(H.extensionInterface, "LoadedRanges to reach the end", from: mark, timeout: 20 * slower) {
            guard let ranges = self.ranges($0["LoadedRanges"]), ranges.count == 1 else { return false }
            return ranges[0][0] == 0 && ranges[0][1] >= 9_900_000
        }
        let announced = harness.propertiesChanged(H.extensionInterface, from: mark).filter { $0.index <= whole.index }
            .compactMap { ranges($0.changed["LoadedRanges"]) }.filter { !$0.isEmpty }
        // told at each twentieth of the download and with each step of BufferingPercent while
        // the first buffering fills: bounded, not at every buffer
        XCTAssertGreaterThanOrEqual(announced.count, 5, "it grew in steps: \(announced)")
        XCTAssertLessThanOrEqual(announced.count, 42, "in bounded steps, not at every buffer: \(announced)")
        // the range from the start (wavparse also peeks at the file's last bytes: a second range)
        let ends = announced.map { $0.first { $0[0] == 0 }?[1] ?? 0 }
        XCTAssertEqual(ends, ends.sorted(), "\(announced)")
        XCTAssertLessThan(ends[0], 5_000_000, "the first ranges came before the whole file: \(announced)")
        XCTAssertGreaterThanOrEqual(announced.filter { $0.contains { $0[0] == 0 && $0[1] > 5_000_000 && $0[1] < 9_900_000 } }.count, 3,
                                    "it grew after the first buffering was done: \(announced)")
        // the download is a file in the cache directory that has no name any more: nothing of it
        // stays behind, even if tonearmd is killed
        XCTAssertEqual(try cacheFiles(), [])
        let engine = try XCTUnwrap(ProcessTree.descendants(of: harness.daemon.pid, named: "tonearm-engine").first, "the engine's process runs")
        let open = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(engine)/fd").compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(engine)/fd/\($0)")
        }
        XCTAssertEqual(open.filter { $0.hasPrefix(harness.cacheHome.path + "/") && $0.hasSuffix(" (deleted)") }.count, 1, "\(open)")
        // a seek into what was downloaded plays from the file: no new request to the server
        let requests = server.requests.count
        let track = try XCTUnwrap(try harness.trackID)
        let seekMark = harness.mark()
        try harness.call(H.player, "SetPosition", "ox", [track, "8000000"])
        let seeked = try harness.waitForSeeked(from: seekMark)
        XCTAssertEqual(Double(seeked), 8_000_000, accuracy: 100_000)
        XCTAssertEqual(try harness.playbackStatus, "Playing")
        XCTAssertEqual(server.requests.count, requests, "\(server.requests)")
        _ = try harness.waitForSignal(H.extensionInterface, "PlayedToEnd", from: seekMark, timeout: 10)
    }

    func testAStalledConnectionIsGivenUpAfterTheNetworkTimeoutAndPlaysOn() throws {
        let (server, path) = try served()
        // the first answer goes silent after 600 kB (3.4 s of audio) for 8 s
        try server.fault(path, [opening(250_000), .init(stall: 8, stallAfter: 600_000, bytesPerSecond: 250_000, times: 1)])
        let mark = harness.mark()
        try harness.start(["--network-timeout", "1", "--reconnect-delay", "0.2", server.url(path)])
        let stalled = try XCTUnwrap(server.waitForStall(path, timeout: 15), "\(server.requests)")
        // with a 1 s timeout the connection is given up and asked again well before the stall ends
        XCTAssertTrue(server.waitForRequests(path, count: 4, timeout: 6), "\(server.requests)")
        XCTAssertLessThan(Date().timeIntervalSince(stalled), 5)
        let ended = try harness.waitForSignal(H.extensionInterface, "PlayedToEnd", from: mark, timeout: 30)
        XCTAssertFalse(harness.watcher.messages(from: mark).filter { $0.index < ended.index }.contains { $0.member == "ItemFailed" },
                       "the item did not fail")
        let statuses = harness.propertiesChanged(H.player, from: mark).filter { $0.index < ended.index }
            .compactMap { $0.changed["PlaybackStatus"]?.string }
        XCTAssertEqual(statuses, ["Playing"])
    }

    func testAServerThatStaysDownFailsTheItemAfterTheAttempts() throws {
        let (server, path) = try served()
        try server.fault(path, [opening(300_000), .init(dropAfter: 700_000, bytesPerSecond: 300_000, times: 1), .init(status: 503)])
        let mark = harness.mark()
        try harness.start(["--reconnect-attempts", "2", "--reconnect-delay", "0.2", server.url(path)])
        let failed = try harness.waitForSignal(H.extensionInterface, "ItemFailed", from: mark, timeout: 20)
        XCTAssertEqual(failed.arguments[1].string, H.errorPrefix + "NetworkError")
        let message = failed.arguments[2].string ?? ""
        XCTAssertTrue(message.contains("HTTP 503 (Service Unavailable) for \(server.url(path))"), message)
        XCTAssertEqual(values(of: "WaitingReason", from: mark).filter { $0 == "reconnecting" }.count, 1,
                       "one wait for reconnecting, through both attempts")
        // the request for the rest after the drop, then our two attempts, one request each:
        // souphttpsrc asks no 503 again itself (GStreamerQuirks: 1.26 asked each three times more)
        XCTAssertEqual(server.requests.filter { $0.status == 503 }.count, 3, "\(server.requests)")
        try harness.waitForStatus("Stopped")
        for method in ["Play", "Stop"] {
            let start = Date()
            try harness.call(H.player, method)
            XCTAssertLessThan(Date().timeIntervalSince(start), 2, method)
        }
    }

    func testStopWhileReconnectingCancelsIt() throws {
        let (server, path) = try served()
        try server.fault(path, [opening(300_000), .init(dropAfter: 700_000, bytesPerSecond: 300_000, times: 1), .init(status: 503)])
        let mark = harness.mark()
        try harness.start(["--reconnect-delay", "1.5", server.url(path)])
        try harness.waitForChange(H.extensionInterface, "WaitingReason reconnecting", from: mark) {
            $0["WaitingReason"]?.string == "reconnecting"
        }
        let asked = server.requests.count
        let start = Date()
        try harness.call(H.player, "Stop")
        XCTAssertLessThan(Date().timeIntervalSince(start), 2)
        try harness.waitForStatus("Stopped")
        XCTAssertEqual(try harness.get(H.extensionInterface, "TimeControlStatus").string, "paused")
        // the reconnect would have asked within 1.5 s; twice that passes with no request
        XCTAssertFalse(server.waitForRequests(path, count: server.requests.filter { $0.path == path }.count + 1, timeout: 3),
                       "a cancelled reconnect still asked: \(server.requests.dropFirst(asked))")
    }
}

/// Internet radio (Icecast/Shoutcast ICY metadata), as a client sees it (issue 12).
final class RadioServiceTests: ServiceTestCase {
    typealias H = ServiceHarness

    func testTheTitleFollowsTheStationsStreamTitle() throws {
        let seconds = 4.0
        let file = try media.tone("radio", format: .mp3, seconds: seconds)
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int)
        let server = try HTTPServer(directory: file.deletingLastPathComponent())
        let titles = ["First Song", "Second Song", "Third Song"]
        // the file looped in real time, a StreamTitle change every 2 s
        try server.icyRadio(at: "stream", file: file.lastPathComponent, station: "Tonearm FM", titles: titles,
                            secondsPerTitle: 2, bytesPerSecond: Int(Double(size) / seconds), metaint: 2000)
        var mark = harness.mark()
        try harness.start([server.url("stream")])
        let follow = try harness.follow("metadata", "xesam:title")
        for title in titles {
            try harness.waitForChange(H.player, "xesam:title \(title)", from: mark, timeout: 15) {
                $0["Metadata"]?.dictionary?["xesam:title"]?.string == title
            }
            try follow.wait(for: "playerctl --follow printing \(title)", timeout: 5) { $0 == title }
            mark = harness.mark()
        }
        let metadata = try harness.metadata
        XCTAssertEqual(metadata["xesam:album"]?.string, "Tonearm FM", "the station's name (icy-name) is the album: \(metadata)")
        XCTAssertNil(metadata["mpris:length"])
        XCTAssertEqual(try harness.get(H.extensionInterface, "IsLive").bool, true)
        XCTAssertEqual(try harness.get(H.player, "CanSeek").bool, false)
        XCTAssertEqual(try harness.playbackStatus, "Playing")
    }
}

/// HLS VOD shapes beyond one MPEG-TS playlist: a variant (multi-bitrate) master playlist and
/// fragmented MP4 segments (issue 12).
final class HLSShapesServiceTests: ServiceTestCase {
    typealias H = ServiceHarness

    /// Plays `url` to its end as a VOD stream of `seconds`: its length, CanSeek, IsLive false, a
    /// seek to the middle answered by Seeked there, PlayedToEnd.
    func assertPlaysAsVOD(_ url: String, seconds: Double, file: StaticString = #filePath, line: UInt = #line) throws {
        let mark = harness.mark()
        try harness.start([url])
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay", timeout: 15)
        let length = try XCTUnwrap(try harness.metadata["mpris:length"]?.int64, "no mpris:length", file: file, line: line)
        XCTAssertEqual(Double(length) / 1e6, seconds, accuracy: 0.5, file: file, line: line)
        XCTAssertEqual(try harness.get(H.extensionInterface, "IsLive").bool, false, file: file, line: line)
        XCTAssertEqual(try harness.get(H.player, "CanSeek").bool, true, file: file, line: line)
        let track = try XCTUnwrap(try harness.trackID)
        let seekMark = harness.mark()
        try harness.call(H.player, "SetPosition", "ox", [track, "\(Int64(seconds / 2 * 1e6))"])
        let seeked = try harness.waitForSeeked(from: seekMark, timeout: 15)
        XCTAssertEqual(Double(seeked) / 1e6, seconds / 2, accuracy: 0.5, file: file, line: line)
        try harness.waitForSignal(H.extensionInterface, "PlayedToEnd", from: mark, timeout: seconds + 15)
        XCTAssertFalse(harness.watcher.messages(from: mark).contains { $0.member == "ItemFailed" }, file: file, line: line)
    }

    func testAVariantPlaylistPlays() throws {
        let generator = try media.generator
        _ = try generator.hlsStream("low", seconds: 8, segments: 4)
        _ = try generator.hlsStream("high", seconds: 8, segments: 4)
        _ = try generator.hlsVariants("master.m3u8", [("low/index.m3u8", 64_000), ("high/index.m3u8", 128_000)])
        let server = try HTTPServer(directory: generator.directory)
        try assertPlaysAsVOD(server.url("master.m3u8"), seconds: 8)
        XCTAssertTrue(server.requests.contains { $0.path.hasSuffix("/index.m3u8") && $0.status == 200 },
                      "a variant's playlist was fetched: \(server.requests)")
    }

    /// Returns once `TimeControlStatus` is `playing` (now, or by a change within 10 s).
    func waitUntilPlaying() throws {
        let mark = harness.mark()
        guard try harness.get(H.extensionInterface, "TimeControlStatus").string != "playing" else { return }
        try harness.waitForChange(H.extensionInterface, "TimeControlStatus playing", from: mark) {
            $0["TimeControlStatus"]?.string == "playing"
        }
    }

    func testAVariantPlaylistMovesToALowerBitrateOnASlowNetworkAndBackWhenItRecovers() throws {
        let generator = try media.generator
        // 30 s in 15 segments, at about 95 and 285 kbit/s (AAC at 32 and 256 kbit/s in MPEG-TS)
        _ = try generator.hlsStream("abr-low", seconds: 30, segments: 15, audioBitrate: 32_000)
        _ = try generator.hlsStream("abr-high", seconds: 30, segments: 15, audioBitrate: 256_000)
        _ = try generator.hlsVariants("abr.m3u8", [("abr-high/index.m3u8", 300_000), ("abr-low/index.m3u8", 100_000)])
        let segments = try String(contentsOf: generator.url("abr-low/index.m3u8"), encoding: .utf8).split(separator: "\n")
            .filter { $0.hasSuffix(".ts") }.map(String.init)
        let server = try HTTPServer(directory: generator.directory)
        // a 200 kbit/s network: the high variant cannot keep up on it, the low one can
        for variant in ["abr-high", "abr-low"] {
            for segment in segments { try server.fault("\(variant)/\(segment)", .init(bytesPerSecond: 25_000)) }
        }
        let mark = harness.mark()
        try harness.start([server.url("abr.m3u8")])
        try harness.waitForStatus("Playing")
        // hlsdemux starts on the first variant, measures its first segment's download and moves
        // down (legacy hlsdemux: bitrate-limit 0.8 of the measured rate)
        XCTAssertTrue(server.waitForRequests("abr-high/\(segments[0])", timeout: 10), "\(server.requests)")
        XCTAssertTrue(server.waitForRequests("abr-low/index.m3u8", timeout: 10), "\(server.requests)")
        XCTAssertTrue(server.waitForRequests("abr-low/\(segments[3])", timeout: 15), "it plays on the low variant: \(server.requests)")
        XCTAssertEqual(server.requests.filter { $0.path.hasPrefix("abr-high/segment") }.count, 1, "\(server.requests)")
        // it may refill its buffer once after the switch; then it plays
        try waitUntilPlaying()
        // the network recovers: it moves back up, and stays there
        try server.clearFaults()
        XCTAssertTrue(server.waitForRequests("abr-high/index.m3u8", count: 2, timeout: 15), "\(server.requests)")
        XCTAssertTrue(server.waitForRequests(count: 3, timeout: 10) { $0.hasPrefix("abr-high/segment") }, "\(server.requests)")
        try waitUntilPlaying()
        XCTAssertEqual(try harness.playbackStatus, "Playing")
        XCTAssertFalse(harness.watcher.messages(from: mark).contains { $0.member == "ItemFailed" })
        XCTAssertEqual(try harness.get(H.extensionInterface, "ItemStatus").string, "readyToPlay")
    }

    /// Segments with H.264 video beside the AAC audio: the service plays the audio (a fakesink takes
    /// the video when there is no display, or when --no-video) and does not stall on the video.
    func testAudioAndVideoSegmentsPlay() throws {
        let generator = try media.generator
        _ = try generator.hlsStream("av", seconds: 8, segments: 4, video: true)
        let server = try HTTPServer(directory: generator.directory)
        try assertPlaysAsVOD(server.url("av/index.m3u8"), seconds: 8)
        // the segments did carry video: an H.264 sequence parameter set (start code, NAL type 7)
        let segment = try Data(contentsOf: generator.url("av/segment0.ts"))
        XCTAssertNotNil(segment.firstRange(of: Data([0, 0, 1, 0x67])), "no H.264 in the first segment")
    }

    func testFragmentedMP4SegmentsPlay() throws {
        let generator = try media.generator
        _ = try generator.hlsFragmentedMP4("fmp4", seconds: 8)
        let server = try HTTPServer(directory: generator.directory)
        try assertPlaysAsVOD(server.url("fmp4/index.m3u8"), seconds: 8)
        XCTAssertTrue(server.requests.contains { $0.path == "fmp4/init.mp4" }, "\(server.requests)")
        XCTAssertTrue(server.requests.contains { $0.path.hasSuffix(".m4s") }, "\(server.requests)")
    }
}
