import GStreamer
import PlayerModel

/// The optional stage of one pipeline's audio filter, between its `scaletempo` and its volume
/// element (whose gain, ReplayGain's included, `OutputLevels` sets): an `equalizer-10bands`. A
/// stage the user has not turned on is not in the pipeline (design brief, "Video and outputs":
/// nothing to process, so CPU playing stays what it was); one turned on or off while playing goes
/// in or out between two buffers (`Element.setStages`), without a gap.
/// Confined to the engine's queue.
final class AudioStages {
    private let filter: Element
    private let head: Element
    private let tail: Element
    private var equalizer: Element?
    /// The stages asked for last, in order.
    private var linked: [Element] = []

    /// The stages of `filter`, a bin of `scaletempo name=tonearm-tempo ! volume name=tonearm-volume`.
    init?(filter: Element) {
        guard let head = filter.child(named: "tonearm-tempo"), let tail = filter.child(named: "tonearm-volume") else { return nil }
        self.filter = filter
        self.head = head
        self.tail = tail
    }

    /// The factories of the elements in the filter now, for tests.
    var filterElements: [String] { filter.childFactoryNames }

    /// Puts the equalizer in with `gains` (dB per band), or takes it out when they are all zero.
    func apply(equalizer gains: [Double]) {
        var stages: [Element] = []
        if gains.contains(where: { $0 != 0 }) {
            if equalizer == nil { equalizer = try? Element(factory: "equalizer-10bands", name: "tonearm-equalizer") }
            if let equalizer {
                // band gains are controllable properties: set on the running element, heard from
                // the next buffer (gstiirequalizer.c recomputes its coefficients under its lock)
                for (band, gain) in gains.enumerated() { equalizer.set("band\(band)", gain) }
                stages.append(equalizer)
            }
        }
        guard stages.map(\.name) != linked.map(\.name) else { return }
        linked = stages
        filter.setStages(stages, between: head, and: tail)
    }
}
