import GStreamer
import PlayerModel

/// What the engine was last told of ReplayGain and the equalizer (`AudioCommand`), applied to
/// each new filter and to the one playing.
struct EngineAudio: Sendable {
    /// Album mode and pre-amp for the stream playing now; nil: off.
    var replayGain: (albumMode: Bool, preamp: Double)?
    var nextAlbumMode: Bool?
    var equalizer = Equalizer.flat

    mutating func take(_ command: AudioCommand) {
        switch command {
        case .replayGain(let albumMode, let preamp): replayGain = (albumMode, preamp)
        case .replayGainOff: replayGain = nil
        case .nextAlbumMode(let albumMode): nextAlbumMode = albumMode
        case .equalizer(let gains): equalizer = gains
        }
    }
}

/// The optional stages of one pipeline's audio filter, between its `scaletempo` and its volume
/// element: a `volume` whose gain a ReplayGain probe sets from each stream's tags, and an
/// `equalizer-10bands`. A stage the user has not turned on is not in the pipeline (design brief,
/// "Video and outputs": nothing to process, so CPU playing stays what it was); one turned on or
/// off while playing goes in or out between two buffers (`Element.setStages`), without a gap.
/// Confined to the engine's queue.
final class AudioStages {
    private let filter: Element
    private let head: Element
    private let tail: Element
    private var replayGain: ReplayGainProbe?
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

    /// The linear ReplayGain factor applied now (1 without the stage), for tests.
    var replayGainFactor: Double { replayGain.map(\.factor) ?? 1 }
    /// The factories of the elements in the filter now, for tests.
    var filterElements: [String] { filter.childFactoryNames }

    func apply(_ audio: EngineAudio) {
        var stages: [Element] = []
        if let wanted = audio.replayGain {
            if replayGain == nil {
                replayGain = (try? Element(factory: "volume", name: "tonearm-replaygain")).flatMap(ReplayGainProbe.init(on:))
            }
            if let replayGain {
                replayGain.set(albumMode: wanted.albumMode, preamp: wanted.preamp)
                replayGain.setNext(albumMode: audio.nextAlbumMode)
                stages.append(replayGain.element)
            }
        }
        if audio.equalizer.contains(where: { $0 != 0 }) {
            if equalizer == nil { equalizer = try? Element(factory: "equalizer-10bands", name: "tonearm-equalizer") }
            if let equalizer {
                // band gains are controllable properties: set on the running element, heard from
                // the next buffer (gstiirequalizer.c recomputes its coefficients under its lock)
                for (band, gain) in audio.equalizer.enumerated() { equalizer.set("band\(band)", gain) }
                stages.append(equalizer)
            }
        }
        guard stages.map(\.name) != linked.map(\.name) else { return }
        linked = stages
        filter.setStages(stages, between: head, and: tail)
    }
}
