import CGStreamer
import CGStreamerCallbacks

/// The audio filter's gain stage (`tonearm_replay_gain_attach`): a `volume` element set to a level
/// its owner gives times the ReplayGain factor of the stream passing through it, which a probe in
/// C on its sink pad reads from each stream's REPLAYGAIN_* tags and Opus R128_* comments, in the
/// stream's order (a gapless next stream's factor starts with its first buffer, not when its tags
/// are read). Holds one reference to the probe's state (the probe the other) and one to the element.
public final class ReplayGainProbe: @unchecked Sendable {
    // @unchecked: immutable; the state behind `gain` has a mutex of its own (the probe's thread
    // and the caller's both use it).
    private let gain: OpaquePointer
    public let element: Element

    /// Attaches to `volume`, at volume 1 and unmuted; nil when it has no sink pad.
    public init?(on volume: Element) {
        guard let gain = tonearm_replay_gain_attach(volume.pointer) else { return nil }
        self.gain = gain
        element = volume
    }

    deinit { tonearm_replay_gain_release(UnsafeMutableRawPointer(gain)) }

    /// ReplayGain for the stream playing now: album mode (else track) and the pre-amp (dB); nil: off.
    public func set(_ mode: (albumMode: Bool, preamp: Double)?) {
        tonearm_replay_gain_set(gain, mode == nil ? 0 : 1, mode?.albumMode == true ? 1 : 0, mode?.preamp ?? 0)
    }

    /// Album mode for the next stream, taken at its stream-start (nil: none armed).
    public func setNext(albumMode: Bool?) {
        tonearm_replay_gain_set_next(gain, albumMode.map { $0 ? 1 : 0 } ?? -1)
    }

    /// The level the element applies besides ReplayGain (linear) and its mute.
    public func setLevel(_ volume: Double, muted: Bool) {
        tonearm_replay_gain_set_level(gain, volume, muted ? 1 : 0)
    }

    /// The linear ReplayGain factor applied now (1 with ReplayGain off or an untagged stream).
    public var factor: Double { tonearm_replay_gain_factor_applied(gain) }
}

extension Element {
    /// Makes the chain between `head` and `tail`, children of this bin, hold exactly `stages`
    /// (at most 4), linked in order; the elements left out are set to NULL and removed. Done when
    /// head's src pad is idle: a playing stream goes on without a gap (`tonearm_filter_chain_set`).
    public func setStages(_ stages: [Element], between head: Element, and tail: Element) {
        var pointers: [UnsafeMutablePointer<GstElement>?] = stages.map { $0.pointer }
        pointers.withUnsafeMutableBufferPointer { buffer in
            tonearm_filter_chain_set(pointer, head.pointer, tail.pointer, buffer.baseAddress, guint(buffer.count))
        }
    }
}
