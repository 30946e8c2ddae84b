import GStreamer
import PlayerModel

/// Which sink shows video on a display (docs/video.md; `TONEARM_VIDEO_SINK`): glimagesink where
/// OpenGL opens on a GPU, else the software path (`ScaledVideoSink`), as mpv does: it refuses a
/// software OpenGL renderer unless told `--gpu-sw`, and falls back to a video output that converts
/// and scales on the CPU. On 2 cores and Mesa's llvmpipe, glimagesink took 17.85 s of CPU for a
/// 10 s 1080p clip and dropped 495 frames; videoconvertscale into ximagesink 1.95 s and none
/// (gst-launch-1.0 playbin, the same display).
public enum VideoSinkChoice: Equatable, Sendable {
    /// glimagesink: it scales on the GPU.
    case openGL
    /// `ScaledVideoSink`: videoconvertscale to the window's size, into ximagesink.
    case scaled
    /// The factory `TONEARM_VIDEO_SINK` names, as it is (ximagesink, xvimagesink: no scaling).
    case factory(String)

    /// `TONEARM_VIDEO_SINK`'s default: glimagesink on a GPU, else the software path.
    public static let automatic = "auto"
    /// The value that asks for the software path whatever OpenGL does (no GL context is made).
    public static let software = "software"

    /// Whether `configured` needs to know what OpenGL gives on the display: `auto`, and
    /// `glimagesink` (which still needs OpenGL to open at all).
    public static func probesOpenGL(_ configured: String) -> Bool {
        configured == automatic || configured == "glimagesink"
    }

    /// The sink for `configured` once OpenGL was probed on the display: `opens` and its `renderer`
    /// (nil: not read). `glimagesink` named keeps glimagesink on a software renderer (mpv's
    /// `--gpu-sw`); either falls back to the software path where OpenGL does not open.
    public static func choose(_ configured: String, opens: Bool, renderer: String?) -> VideoSinkChoice {
        switch configured {
        case automatic: opens && !isSoftwareRenderer(renderer) ? .openGL : .scaled
        case "glimagesink": opens ? .openGL : .scaled
        case software: .scaled
        default: .factory(configured)
        }
    }

    /// Whether an OpenGL renderer (GL_RENDERER) rasterizes on the CPU: Mesa's llvmpipe, softpipe
    /// and classic swrast ("Software Rasterizer"). The idea, and most of these names, come from
    /// mpv's is_software_gl (video/out/opengl/common.c), behind its "Suspected software renderer"
    /// refusal; like it, a renderer that could not be read counts as software.
    public static func isSoftwareRenderer(_ renderer: String?) -> Bool {
        guard let renderer, !renderer.isEmpty else { return true }
        let name = renderer.lowercased()
        return ["llvmpipe", "softpipe", "software rasterizer", "swrast"].contains { name.contains($0) }
    }

    /// How the log says it.
    var description: String {
        switch self {
        case .openGL: "glimagesink"
        case .scaled: "videoconvertscale ! ximagesink (scaled on the CPU)"
        case .factory(let name): name
        }
    }
}

/// The software path's sink: `videoconvertscale ! capsfilter ! ximagesink` in one bin, which
/// converts and scales each frame on the CPU to the picture's size in the sink's window (the
/// `frame` tonearmd places it at: `VideoGravity.frame`), so that ximagesink, which cannot scale,
/// draws it whole: the window's size, or smaller and centred for `fit`. Until a frame is known the
/// video keeps its own size. Made and changed on the engine's queue; `bin` and `sink` are read
/// from the bus's sync handler too.
public final class ScaledVideoSink: Sendable {
    /// What playbin gets as its `video-sink`.
    let bin: Element
    /// The ximagesink inside: it asks for the window (prepare-window-handle) and draws exposes.
    let sink: Element
    private let scaler: Element
    private let size: Element

    /// The sizes a frame's caps are clamped to, so that a window a few pixels wide (or 0, or
    /// negative from a bad line) or a huge one never fails the negotiation or asks for an image
    /// of gigabytes: 8192 is past any screen (and far below X's 16-bit window sizes).
    public static let sizes = 16...8192

    init(display: String) throws(GStreamerError) {
        // pixel-aspect-ratio 1/1: the frame is in the window's pixels, which are square as
        // glimagesink takes them (ximagesink otherwise offers the screen's from its millimetres);
        // caps-change-mode delayed: the buffer already on its way at a new size passes with the
        // old caps, where capsfilter would refuse it with a "not negotiated" warning (gstcapsfilter.c)
        bin = try Element(binDescription: "videoconvertscale name=tonearm-scale ! capsfilter name=tonearm-size caps-change-mode=delayed"
            + " caps=video/x-raw,pixel-aspect-ratio=1/1 ! ximagesink name=tonearm-ximagesink")
        guard let scaler = bin.child(named: "tonearm-scale"), let size = bin.child(named: "tonearm-size"),
              let sink = bin.child(named: "tonearm-ximagesink") else {
            throw GStreamerError(domain: GStreamerError.coreDomain, code: 0, message: "the scaled video sink's bin lost a child")
        }
        (self.scaler, self.size, self.sink) = (scaler, size, sink)
        sink.set("display", display)
        sink.set("pixel-aspect-ratio", "1/1")
        // with neither events nor exposes to handle, ximagesink starts no event thread, which would
        // look for them 20 times a second (ximagesink.c, gst_ximagesink_event_thread): the window
        // program tells of exposes ("exposed"), and the sink is asked to draw again
        sink.set("handle-expose", false)
        sink.set("handle-events", false)
        // fit's bars: an expose between new caps and their first image left the larger image's
        // pixels in them (VideoSoftwarePathTests, 1 run in the suite)
        sink.redrawAfterCaps()
    }

    /// The size of the picture in `frame` for a video of `video` (display size), clamped to
    /// `sizes`: `fit` (a frame that keeps the aspect) the largest of the video's aspect inside it,
    /// whose bars ximagesink paints (it centres an image smaller than its window and fills the rest
    /// black at each caps change and expose: ximagesink.c gst_ximagesink_ximage_put,
    /// gst_video_center_rect), so no bar is converted and copied with every frame; fill's frame
    /// has the video's aspect already; stretch is the frame. Nil: no frame yet, the video's own size.
    public static func pictureSize(in frame: VideoFrame?, video: VideoSize) -> VideoSize? {
        guard let frame else { return nil }
        var width = Double(frame.width), height = Double(frame.height)
        if frame.keepsAspect, video.width > 0, video.height > 0, width > 0, height > 0 {
            // in Double: sizes from the window and the video never trap
            let scale = min(width / Double(video.width), height / Double(video.height))
            width = (Double(video.width) * scale).rounded()
            height = (Double(video.height) * scale).rounded()
        }
        // clamped as a Double: a size past Int's range would trap in the conversion
        func clamped(_ value: Double) -> Int {
            value.isFinite ? Int(min(max(value, Double(sizes.lowerBound)), Double(sizes.upperBound))) : sizes.lowerBound
        }
        return VideoSize(width: clamped(width), height: clamped(height))
    }

    /// The caps that make the scaler's output `size` (nil: the video's own size), in square pixels.
    public static func caps(for size: VideoSize?) -> String {
        guard let size else { return "video/x-raw,pixel-aspect-ratio=1/1" }
        return "video/x-raw,width=\(size.width),height=\(size.height),pixel-aspect-ratio=1/1"
    }

    /// Scales to the picture's size in `frame` from the next frame on (`pictureSize`): the
    /// capsfilter's new caps make videoconvertscale negotiate again (capsfilter reconfigures
    /// upstream). `add-borders` keeps the aspect where rounding leaves a pixel over (fit, fill) and
    /// is off for stretch. A paused pipeline pushes no next frame: the engine redraws it. (The
    /// borders setting alone, at unchanged caps, would never be taken: a basetransform configures
    /// itself again only for new caps.)
    func scale(to frame: VideoFrame?, video: VideoSize) {
        scaler.set("add-borders", frame?.keepsAspect ?? true)
        size.set("caps", parsing: Self.caps(for: Self.pictureSize(in: frame, video: video)))
    }
}
