import CGStreamer
import CGStreamerCallbacks

/// ReplayGain on a `volume` element (`tonearm_replay_gain_attach`): a probe in C on its sink pad
/// reads each stream's REPLAYGAIN_* tags and Opus R128_* comments and sets the element's volume.
/// Holds one reference to the probe's state (the probe the other) and one to the element.
public final class ReplayGainProbe: @unchecked Sendable {
    // @unchecked: immutable; the state behind `gain` has a mutex of its own (the probe's thread
    // and the caller's both use it).
    private let gain: OpaquePointer
    public let element: Element

    /// Attaches to `volume`; nil when it has no sink pad.
    public init?(on volume: Element) {
        guard let gain = tonearm_replay_gain_attach(volume.pointer) else { return nil }
        self.gain = gain
        element = volume
    }

    deinit { tonearm_replay_gain_release(UnsafeMutableRawPointer(gain)) }

    /// Album mode and the pre-amp (dB) for the stream playing now.
    public func set(albumMode: Bool, preamp: Double) {
        tonearm_replay_gain_set(gain, albumMode ? 1 : 0, preamp)
    }

    /// Album mode for the next stream, taken at its stream-start (nil: none armed).
    public func setNext(albumMode: Bool?) {
        tonearm_replay_gain_set_next(gain, albumMode.map { $0 ? 1 : 0 } ?? -1)
    }

    /// The linear factor applied now.
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
