import Foundation
import TestSupport
import XCTest

/// What a file costs to recognise and decode. gst-libav brings FFmpeg and the ~150 libraries it
/// links, which stay mapped for good (7.5 MiB of private memory): a file nothing recognises and an
/// AAC file play or fail without it; a DSF file, which only gst-libav decodes, is still recognised
/// by Tonearm's own typefinder and plays.
final class DecoderChoiceTests: ServiceTestCase {
    typealias H = ServiceHarness

    /// Whether the engine's process has FFmpeg's codec library mapped (/proc/PID/maps).
    func mapsFFmpeg() throws -> Bool {
        try maps(of: try XCTUnwrap(enginePID, "the engine's process runs"), wholeIf: "libgstreamer-1.0").contains("libavcodec")
    }

    func testABrokenFileAndAnAACFileDoNotLoadFFmpeg() throws {
        let noise = try media.generator.garbage("noise.mp3")
        let aac = try media.generator.url("tone.m4a")
        try media.generator.gstLaunch("audiotestsrc num-buffers=300 ! audio/x-raw,rate=44100,channels=2 ! avenc_aac"
                                      + " ! aacparse ! mp4mux ! filesink location=\(aac.path)")
        try harness.start()
        let mark = harness.mark()
        try harness.playerctl("open", H.uri(noise))
        _ = try harness.waitForSignal(H.extensionInterface, "ItemFailed", from: mark)
        XCTAssertFalse(try mapsFFmpeg(), "recognising nothing in a file loaded FFmpeg")

        try harness.playerctl("open", H.uri(aac))
        try harness.waitForStatus("Playing")
        // prerolled: the decoder made the first buffer the sink holds
        try harness.waitForItemStatus("readyToPlay")
        XCTAssertFalse(try mapsFFmpeg(), "decoding AAC loaded FFmpeg")
    }

    /// A DSF file (Sony's DSF specification 1.01) of 2 s of DSD64 stereo "silence" (0x69), written
    /// here: no GStreamer element writes DSF.
    func dsf(seconds: Int) throws -> URL {
        let rate = 2_822_400, channels = 2, block = 4096
        let bytesPerChannel = rate / 8 * seconds
        let blocks = (bytesPerChannel + block - 1) / block
        var data = Data()
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { data.append(contentsOf: $0) } }
        func u64(_ v: Int) { withUnsafeBytes(of: UInt64(v).littleEndian) { data.append(contentsOf: $0) } }
        let samples = Data(repeating: 0x69, count: blocks * block * channels)
        data.append(contentsOf: Array("DSD ".utf8)); u64(28); u64(28 + 52 + 12 + samples.count); u64(0)
        data.append(contentsOf: Array("fmt ".utf8)); u64(52)
        u32(1); u32(0); u32(2); u32(channels); u32(rate); u32(1); u64(bytesPerChannel * 8); u32(block); u32(0)
        data.append(contentsOf: Array("data".utf8)); u64(12 + samples.count)
        data.append(samples)
        let url = try media.generator.url("silence.dsf")
        try data.write(to: url)
        return url
    }

    func testADSFFileIsRecognisedAndPlays() throws {
        let file = try dsf(seconds: 2)
        try harness.start()
        try harness.playerctl("open", H.uri(file))
        try harness.waitForStatus("Playing")
        try harness.waitForItemStatus("readyToPlay")
        let length = try harness.metadata["mpris:length"]?.int64
        XCTAssertEqual(Double(length ?? 0) / 1e6, 2, accuracy: 0.1, "mpris:length of a 2 s DSF")
    }
}
