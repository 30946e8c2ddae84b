import GStreamer
import PlayerModel

/// A video item followed by itself (MPRIS `LoopStatus` `Track`) loops by segment seeks, not
/// by about-to-finish: a flushing SEGMENT seek where it is puts the pipeline in segment mode,
/// its end is then a SEGMENT_DONE instead of EOS, and a non-flushing SEGMENT seek to 0 there
/// goes on with no flush, no new decoders and no re-preroll (GStreamer's documented way to
/// loop seamlessly, GstSeekFlags GST_SEEK_FLAG_SEGMENT). About-to-finish with the same URI
/// deadlocks legacy playbin 1.22.0 on a file with audio and video (the drained handler's
/// deactivate_group waits for a pad's stream lock that streamsynchronizer holds: gdb on a
/// looping H.264+AAC MP4), and switches decoders at every lap.
///
/// One per pipeline (`EnginePipeline.loop`), the one owner of its segment seeks: the engine
/// decides when a video loops (`follow`), hands it the pipeline's SEGMENT_DONE (`wrap`) and the
/// segments its sink reached (`wrapped`), and asks it for the flags of a client's seek. Confined to
/// the engine's queue.
struct SegmentLoop {
    /// The generation the next lap is for, while looping.
    private(set) var generation: Generation?
    /// The lap whose segment seek (this seqnum) was sent: told to the player once that seek's
    /// segment reaches the video sink (a client's flushing seek sent just before sends one too).
    private var wrapping: (generation: Generation, seqnum: UInt32)?
    /// The rate of the latest seek, which the loop's own seeks keep.
    private var rate = 1.0
    /// The latest segment seek's sequence number: a SEGMENT_DONE of an earlier one (read from
    /// the bus after a client's seek went) is stale.
    private var seqnum: UInt32?

    /// Loops `playbin` with the next lap told as `lap` (the current item's own next load: its
    /// video reached the window), or leaves a loop when `lap` is nil. True when it loops (nothing
    /// is to be armed for about-to-finish).
    mutating func follow(_ playbin: Element, lap: Generation?) -> Bool {
        guard let lap else {
            if generation != nil {
                // out of segment mode, so that its end is an EOS again (and about-to-finish comes):
                // a flushing seek where it is
                self = SegmentLoop(rate: rate)
                _ = playbin.seek(rate: rate, flags: [.flush, .accurate], start: playbin.queryPosition() ?? 0)
            }
            return false
        }
        let entering = generation == nil
        generation = lap
        if entering {
            // at the preroll this re-prerolls the same frame; while playing it is one short hitch
            seqnum = playbin.numberedSeek(rate: rate, flags: [.flush, .accurate, .segment], start: playbin.queryPosition() ?? 0)
        }
        return true
    }

    /// SEGMENT_DONE of the seek `done`: the demuxer sent the lap's last data; the next lap is
    /// queued behind it at once, by a non-flushing segment seek to the start. A stale one (an
    /// earlier seek's), or one after the loop was left (a flushing seek follows), does nothing.
    mutating func wrap(_ playbin: Element, done: UInt32) {
        guard done == seqnum, let next = generation else { return }
        seqnum = playbin.numberedSeek(rate: rate, flags: [.segment, .accurate], start: 0)
        wrapping = seqnum.map { (next, $0) }
    }

    /// A segment of the seek `reached` entered the sink: when it is the next lap's, its last frame
    /// of the lap before is on screen and the position reads from the start; returns the lap's
    /// generation, which the player hears of as of a gapless switch to the same item (a `Seeked`
    /// to 0). Nil for any other segment.
    mutating func wrapped(by reached: UInt32) -> Generation? {
        guard let (next, sent) = wrapping, sent == reached else { return nil }
        wrapping = nil
        return next
    }

    /// A client's flushing seek at `rate` is about to go: the flags it needs to keep a loop's
    /// segment mode. A flushing seek drops a wrap on its way to the sink.
    mutating func clientSeeks(rate: Double) -> SeekFlags {
        self.rate = rate
        wrapping = nil
        return generation != nil ? [.segment] : []
    }

    /// The client's seek went with `seqnum` (nil: refused): while looping, it is the latest
    /// segment seek, whose SEGMENT_DONE the next wrap waits for.
    mutating func clientSeekSent(_ seqnum: UInt32?) {
        if generation != nil { self.seqnum = seqnum }
    }

    private init(rate: Double) { self.rate = rate }
    init() {}
}
