import Foundation
import TestSupport
import XCTest

/// Video loops (issue 28): with `LoopStatus` `Track`, a video item loops in the same window with no
/// black frame and no frame held much longer than its period, on a real X display (Xvfb with
/// openbox), as a muted banner video would.
///
/// How the screen is read: `ximagesrc` grabs an 8-row strip across the middle of the window at
/// 120 Hz (Xvfb has no vertical sync: each grab is one XShmGetImage, which the X server runs
/// between two XShmPutImage of the sink, so a grab never holds half of two frames), and
/// `identity silent=false` prints each grab's timestamp (`gst-launch-1.0 -v`), which is the
/// clock's time when the grab was made. The clip's bar moves 5 px a frame, so each grab tells
/// which of the 60 frames was on screen. What that resolves: a frame shown from t1 to t2 is first
/// seen at the first grab after t1 and left at the first grab after t2, so a measured hold is off
/// by at most one grab interval (8.3 ms when the grabber keeps up; the check below subtracts the
/// interval actually measured, so a grabber that stalls under load cannot fail the test, and a hold
/// that is certainly longer than two frame periods does).
final class VideoLoopTests: VideoTestCase {

    /// 2 s of a yellow bar on blue (no black anywhere) that scrolls 5 px left each frame, 320x240 at
    /// 30 fps, H.264 in MP4; with `audio`, 2 s of AAC beside it (the case that hung legacy playbin
    /// 1.22.0 at the end of the first lap, when loops were gapless switches to the same URI).
    func clip(audio: Bool) throws -> URL {
        var pipeline = [
            "videotestsrc", "pattern=bar", "foreground-color=0xffffff00", "background-color=0xff3050c0",
            "horizontal-speed=\(Self.step)", "num-buffers=\(Self.frames)", "!",
            "video/x-raw,width=320,height=240,framerate=30/1,format=I420", "!",
            "x264enc", "speed-preset=ultrafast", "!", "mp4mux", "name=m", "!", "filesink", "location=OUT",
        ]
        if audio { pipeline += ["audiotestsrc", "num-buffers=86", "samplesperbuffer=1024", "!", "avenc_aac", "!", "m."] }
        return try video(audio ? "bar-av.mp4" : "bar.mp4", pipeline)
    }

    static let frames = 60, step = 5, framePeriod = 1.0 / 30

    /// Looping from the start: the loop is armed at the preroll.
    func testAVideoLoopsSeamlesslyInTheSameWindow() throws {
        try checkLoops(try clip(audio: false), loopWhilePlaying: false)
    }

    /// Looping asked while it plays (armed then), with audio beside the video.
    func testAVideoWithAudioLoopsSeamlesslyInTheSameWindow() throws {
        try checkLoops(try clip(audio: true), loopWhilePlaying: true)
    }

    /// Not a loop, but the same deadlock: a video with audio followed by another switched
    /// gaplessly on legacy playbin 1.22.0 hung at the end of the first. The second plays after
    /// it, in the same window.
    func testAVideoWithAudioAfterAnotherPlaysOnInTheSameWindow() throws {
        let x = try startDisplay()
        let first = try clip(audio: true)
        let second = first.deletingLastPathComponent().appendingPathComponent("bar-av-second.mp4")
        if !FileManager.default.fileExists(atPath: second.path) { try FileManager.default.copyItem(at: first, to: second) }
        try harness.start([first.path, second.path], environment: environment(x))
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay")
        let tracks = try harness.tracks
        guard tracks.count == 2 else { return XCTFail("two tracks queued: \(tracks)") }
        let window = try x.waitForWindow(classed: "tonearm")
        try harness.waitForTrack(tracks[1], timeout: 10)
        try harness.waitForStatus("Playing")
        XCTAssertEqual(try x.windows(classed: "tonearm"), [window])
        // it plays to its end too: the queue ends, and the window with it
        try harness.waitForStatus("Stopped", timeout: 10)
    }

    /// tonearmd's environment on display `x`. Under ASan (make test-asan), Mesa's OpenGL is
    /// softpipe (scripts/test.sh says why), whose per-pixel conversion in an instrumented process
    /// is too slow for the video to keep up: it fell more than a lap behind and the loop's segment
    /// end never came. The loops are the engine's segment seeks, whatever the sink: there they
    /// play through bare ximagesink (the window keeps the clip's size, so nothing is scaled); TSan
    /// runs them on the default's, the software path llvmpipe gets (videoconvertscale into ximagesink).
    private func environment(_ x: XDisplay) -> [String: String] {
        var environment = ["DISPLAY": x.name]
        if ProcessInfo.processInfo.environment["SWIFT_SANITIZE"] == "address" { environment["TONEARM_VIDEO_SINK"] = "ximagesink" }
        return environment
    }

    private func checkLoops(_ file: URL, loopWhilePlaying: Bool) throws {
        let x = try startDisplay()
        try harness.start(environment: environment(x))
        if !loopWhilePlaying { try harness.set(H.player, "LoopStatus", "s", "Track") }
        let mark = harness.mark()
        try harness.call(H.player, "OpenUri", "s", [H.uri(file)])
        try harness.waitForChange(H.root, "CanRaise true", from: mark) { $0["CanRaise"]?.bool == true }
        let window = try x.waitForWindow(classed: "tonearm")
        try x.waitForX("the window to take the video's 320x240") { try x.geometry(of: window).size == (320, 240) }
        try harness.waitForStatus("Playing")
        if loopWhilePlaying { try harness.set(H.player, "LoopStatus", "s", "Track") }

        let lapsMark = harness.mark()
        let grabs = try x.grabStrip(of: window, rows: 116..<124, rate: 120, seconds: 12)
        let frames = grabs.map { Self.frameShown(in: $0.pixels) }
        let unknown = frames.indices.filter { frames[$0] == nil }
        XCTAssertEqual(unknown.count, 0, "grabs that show no frame of the clip (black or something else), at \(unknown.prefix(10).map { grabs[$0].time })")

        // the frames as they followed each other: (frame, the grab that first showed it)
        var shown: [(frame: Int, grab: Int)] = []
        for (index, frame) in frames.enumerated() {
            guard let frame, shown.last?.frame != frame else { continue }
            shown.append((frame, index))
        }
        // each frame's hold, less the grab interval that ends it (see the class's comment)
        let holds: [(frame: Int, at: Double, hold: Double)] = zip(shown, shown.dropFirst()).map { this, next in
            let measured = grabs[next.grab].time - grabs[this.grab].time
            return (this.frame, grabs[this.grab].time, measured - (grabs[next.grab].time - grabs[next.grab - 1].time))
        }
        // the laps: where the frame shown goes back. At each, the lap's last frame and the next
        // lap's first are held at most two frame periods. Holds inside a lap are the machine's
        // scheduling, not the loop's (on a 2-core machine running other builds, playbin3 held a
        // frame 100-150 ms now and then mid-lap, looping or not): they are printed, not checked.
        let laps = holds.indices.dropLast().filter { holds[$0 + 1].frame < holds[$0].frame }
        // A sanitized build (make test-asan, test-tsan) runs several times slower and its software
        // OpenGL drops frames all through a lap (GStreamer's QoS: "A lot of buffers are being
        // dropped"): how long a frame stays on screen says nothing of the loop there. It still
        // loops in the same window, announces each lap and takes a seek, checked below.
        guard H.slowdown == 1 else {
            XCTAssertGreaterThanOrEqual(laps.count, 1, "laps seen in 12 s of a 2 s clip: \(shown.map(\.frame))")
            return try checkLapsAnnouncedAndSeek(window, x, lapsMark)
        }
        XCTAssertGreaterThanOrEqual(laps.count, 5, "laps seen in 12 s of a 2 s clip: \(shown.map(\.frame))")
        for lap in laps {
            let (last, first) = (holds[lap], holds[lap + 1])
            XCTAssertLessThanOrEqual(last.hold, 2 * Self.framePeriod, "frame \(last.frame), the lap's last, was on screen at least \(Int(last.hold * 1000)) ms from \(last.at) s")
            XCTAssertLessThanOrEqual(first.hold, 2 * Self.framePeriod, "frame \(first.frame), the lap's first, was on screen at least \(Int(first.hold * 1000)) ms from \(first.at) s")
            // a lap may end at frame 58: qtdemux 1.22 starts the next lap's running time at the last
            // frame's start (gst_segment_do_seek takes the new base from the demuxer's position,
            // a frame's start), so a clip whose video ends last loses its last frame each lap.
            // qtdemux 1.26 moves its position to the segment's end first (the file's duration:
            // GStreamerQuirks says so), so there the last frame stays until the lap's end: with
            // audio, about 50 ms (measured on Debian 13, 4 runs of 4)
            XCTAssertGreaterThanOrEqual(last.frame, Self.frames - 2, "a lap ended at frame \(last.frame)")
            XCTAssertLessThanOrEqual(first.frame, 1, "a lap began at frame \(first.frame)")
        }
        if let longest = holds.max(by: { $0.hold < $1.hold }) {
            print("longest hold: frame \(longest.frame), at least \(Int(longest.hold * 1000)) ms from \(longest.at) s")
        }
        try checkLapsAnnouncedAndSeek(window, x, lapsMark)
    }

    /// The loop as clients and the screen see it, whatever the frames' timing: the same window all
    /// along, a Seeked to 0 at each lap, a seek while it loops lands, and it ends when asked.
    private func checkLapsAnnouncedAndSeek(_ window: String, _ x: XDisplay, _ lapsMark: Int) throws {

        // the same window all along, and each lap is a jump to 0 for clients (MPRIS Seeked)
        XCTAssertEqual(try x.windows(classed: "tonearm"), [window])
        let seeks = harness.watcher.messages(from: lapsMark).filter { $0.member == "Seeked" }.compactMap { $0.arguments.first?.int64 }
        XCTAssertGreaterThanOrEqual(seeks.count, 5, "Seeked at each lap")
        XCTAssertTrue(seeks.allSatisfy { $0 < 100_000 }, "each lap's Seeked is near 0 µs: \(seeks)")
        let seekMark = harness.mark()
        _ = try harness.waitForSeeked(from: seekMark)
        let position = try XCTUnwrap(harness.get(H.player, "Position").int64)
        XCTAssertLessThan(position, 1_000_000, "Position read after a lap's Seeked is from the lap's start")
        XCTAssertEqual(try harness.playbackStatus, "Playing")

        // a seek while it loops lands, and the laps go on after it: 50 ms before the end, so that
        // the demuxer ends the segment before the sinks preroll at the seek (the lap's messages
        // then come before the seek's ASYNC_DONE, and only their seqnums tell them apart)
        let track = try XCTUnwrap(harness.trackID)
        let setMark = harness.mark()
        try harness.call(H.player, "SetPosition", "ox", [track, "1950000"])
        // (a lap's Seeked to 0 may come first)
        let landed = try harness.waitForSignal(H.player, "Seeked", from: setMark) {
            ($0.arguments.first?.int64).map { abs($0 - 1_950_000) < 50_000 } ?? false
        }
        try harness.waitForSignal(H.player, "Seeked", from: landed.index + 1, timeout: 5) {
            ($0.arguments.first?.int64).map { $0 < 100_000 } ?? false
        }
        // no more looping: it plays to its end, and the queue (this one item) with it
        try harness.set(H.player, "LoopStatus", "s", "None")
        try harness.waitForStatus("Stopped", timeout: 5)
        try x.waitForX("the window to close at the end of the queue") { try x.windows(classed: "tonearm").isEmpty }
    }

    /// The frame of the clip a strip of the window shows: the bar's left edge says it (frame n
    /// starts the bar at (320 - 5 n) mod 320). Nil when the strip shows no bar, two bars, or black.
    static func frameShown(in pixels: [[UInt8]]) -> Int? {
        let width = pixels.count
        let yellow = pixels.map { $0[0] > 150 && $0[1] > 150 && $0[2] < 110 }
        let dark = pixels.filter { (Int($0[0]) + Int($0[1]) + Int($0[2])) / 3 < 40 }.count
        guard dark < width / 2 else { return nil }
        let edges = (0..<width).filter { yellow[$0] && !yellow[($0 + width - 1) % width] }
        guard edges.count == 1 else { return nil }
        let frame = Int((Double((width - edges[0]) % width) / Double(step)).rounded())
        return frame < frames ? frame : nil
    }
}

extension XDisplay {
    /// Grabs `rows` of `window` (at its place on the screen) `rate` times a second for `seconds`:
    /// each grab's time (the pipeline's clock, from identity's messages) and the middle row's RGB
    /// pixels. X has no one-row grab that works (ximagesrc returns the first image again for a
    /// strip one row high), hence several rows.
    func grabStrip(of window: String, rows: Range<Int>, rate: Int, seconds: Int) throws -> [(time: Double, pixels: [[UInt8]])] {
        let (x, y, (width, _)) = try geometry(of: window)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-strip-\(UUID().uuidString).rgb")
        defer { try? FileManager.default.removeItem(at: file) }
        let output = try Tool.run("gst-launch-1.0", [
            "-v", "ximagesrc", "display-name=\(name)", "use-damage=false", "show-pointer=false",
            "startx=\(x)", "endx=\(x + width - 1)", "starty=\(y + rows.lowerBound)", "endy=\(y + rows.upperBound - 1)",
            "num-buffers=\(rate * seconds)", "!", "video/x-raw,framerate=\(rate)/1", "!", "videoconvert", "!",
            "video/x-raw,format=RGB", "!", "identity", "name=grabs", "silent=false", "!", "filesink", "location=\(file.path)",
        ], timeout: TimeInterval(seconds) * 3 + 15)
        guard output.status == 0 else { throw TestError("ximagesrc could not grab \(window): \(output.stderr)") }
        // "... (grabs:sink) (7680 bytes, dts: none, pts: 0:00:01.016666666, duration: ..."
        let times: [Double] = output.stdout.split(separator: "\n").compactMap { line in
            guard line.contains("(grabs:sink)"), let range = line.range(of: "pts: ") else { return nil }
            let clock = line[range.upperBound...].prefix { $0 != "," }.split(separator: ":")
            guard clock.count == 3, let h = Double(clock[0]), let m = Double(clock[1]), let s = Double(clock[2]) else { return nil }
            return h * 3600 + m * 60 + s
        }
        let data = try Data(contentsOf: file)
        let rowBytes = width * 3, grabBytes = rowBytes * rows.count
        guard data.count == grabBytes * times.count, !times.isEmpty else {
            throw TestError("\(data.count) bytes for \(times.count) grabs of \(grabBytes) bytes")
        }
        return times.enumerated().map { index, time in
            let middle = index * grabBytes + rows.count / 2 * rowBytes
            return (time, (0..<width).map { column in
                let pixel = middle + column * 3
                return [data[pixel], data[pixel + 1], data[pixel + 2]]
            })
        }
    }
}
