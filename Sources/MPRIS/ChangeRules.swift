import DBus
import PlayerModel

/// The kind of a player event, without its payload: what change rules are keyed by.
enum PlayerEventKind: Hashable, CaseIterable, Sendable {
    case currentItemChanged, queueChanged, itemStatusChanged, timeControlStatusChanged, intentChanged, bufferingChanged,
         metadataChanged, durationChanged, capabilitiesChanged, rateChanged, volumeChanged, loopModeChanged, shuffleChanged,
         seeked, playedToEnd, itemFailed, gapSkipped, outputFailed, videoChanged,
         stopAfterCurrentChanged, sleepTimerChanged,
         audioChanged,
         outputsChanged, linearPlaybackChanged, resumePlacesChanged, placeKept, chaptersChanged, currentChapterChanged,
         nextByChapterChanged
    case openRequested

    /// What the item or the player's settings became, each with no finer rule: Player and the
    /// extension re-read all of their properties on them.
    static let stateChanges: [PlayerEventKind] = [.itemStatusChanged, .bufferingChanged, .capabilitiesChanged, .volumeChanged,
                                                  .loopModeChanged, .shuffleChanged, .outputFailed]

    /// The event as tonearm-dbus(7) says what announces a property (SurfaceDump.swift); no default:
    /// a new event is described where it is added.
    var meaning: String {
        switch self {
        case .currentItemChanged: "the current track changes"
        case .queueChanged: "tracks are added, removed or moved"
        case .itemStatusChanged: "the current track's load status changes"
        case .timeControlStatusChanged: "the transport starts, waits or stops advancing"
        case .intentChanged: "play or pause is asked"
        case .bufferingChanged: "buffering progresses"
        case .metadataChanged: "the current track's tags change"
        case .durationChanged: "the current track's length becomes known"
        case .capabilitiesChanged: "what the current track allows (seeking, next, previous) changes"
        case .rateChanged: "the rate changes"
        case .volumeChanged: "the volume changes"
        case .loopModeChanged: "the loop mode changes"
        case .shuffleChanged: "shuffle is turned on or off"
        case .seeked: "the position jumps"
        case .playedToEnd: "a track plays to its end"
        case .itemFailed: "a track fails"
        case .gapSkipped: "a gap in a stream is skipped"
        case .outputFailed: "the sound output fails"
        case .videoChanged: "the video or its window changes"
        case .stopAfterCurrentChanged: "stop-after-current is set or spent"
        case .sleepTimerChanged: "the sleep timer is set, cancelled or fires"
        case .audioChanged: "a sound setting (ReplayGain, equalizer, crossfade) changes"
        case .outputsChanged: "the outputs or the chosen one change"
        case .linearPlaybackChanged: "linear playback is turned on or off"
        case .resumePlacesChanged: "kept places are turned on or off"
        case .placeKept: "a long track's place is kept or forgotten"
        case .chaptersChanged: "the current track's chapters are read"
        case .currentChapterChanged: "playback enters another chapter (crossing a boundary, a seek, another track)"
        case .nextByChapterChanged: "Next and Previous by chapter is turned on or off"
        case .openRequested: "a file is opened from the desktop"
        }
    }

    // no default: a new event is a decision for each interface's rules
    init(_ event: PlayerEvent) {
        switch event {
        case .currentItemChanged: self = .currentItemChanged
        case .queueChanged: self = .queueChanged
        case .itemStatusChanged: self = .itemStatusChanged
        case .timeControlStatusChanged: self = .timeControlStatusChanged
        case .intentChanged: self = .intentChanged
        case .bufferingChanged: self = .bufferingChanged
        case .metadataChanged: self = .metadataChanged
        case .durationChanged: self = .durationChanged
        case .capabilitiesChanged: self = .capabilitiesChanged
        case .rateChanged: self = .rateChanged
        case .volumeChanged: self = .volumeChanged
        case .loopModeChanged: self = .loopModeChanged
        case .shuffleChanged: self = .shuffleChanged
        case .seeked: self = .seeked
        case .playedToEnd: self = .playedToEnd
        case .itemFailed: self = .itemFailed
        case .gapSkipped: self = .gapSkipped
        case .outputFailed: self = .outputFailed
        case .videoChanged: self = .videoChanged
        case .stopAfterCurrentChanged: self = .stopAfterCurrentChanged
        case .sleepTimerChanged: self = .sleepTimerChanged
        case .audioChanged: self = .audioChanged
        case .outputsChanged: self = .outputsChanged
        case .linearPlaybackChanged: self = .linearPlaybackChanged
        case .resumePlacesChanged: self = .resumePlacesChanged
        case .placeKept: self = .placeKept
        case .chaptersChanged: self = .chaptersChanged
        case .currentChapterChanged: self = .currentChapterChanged
        case .nextByChapterChanged: self = .nextByChapterChanged
        case .openRequested: self = .openRequested
        }
    }
}

/// Which properties of one interface each kind of player event may change, declared once beside
/// the interface's table. The service marks them (`ExportedObject.propertiesMayHaveChanged`),
/// which re-reads them and announces those whose value really changed. A name the table lacks is a
/// programmer error: `unknownNames` finds it (MPRISTests), and `start()` traps on one.
struct ChangeRules: Sendable {
    enum Changes: Sendable {
        /// Every property of the interface is re-read.
        case all
        /// Only these.
        case only([String])
    }

    let interface: String
    /// An event kind not listed changes none of the interface's properties.
    let changes: [PlayerEventKind: Changes]

    /// `changes`, and every property re-read on each event of `rereadingAll`.
    init(_ interface: String, _ changes: [PlayerEventKind: Changes], rereadingAll: [PlayerEventKind] = []) {
        self.interface = interface
        self.changes = changes.merging(rereadingAll.map { ($0, .all) }) { rule, _ in rule }
    }

    /// The names the rules give that `interface`'s table among `tables` does not have, each as
    /// `interface.name`; the interface alone when none of the tables is its.
    func unknownNames(in tables: [InterfaceDescription]) -> [String] {
        guard let table = tables.first(where: { $0.name == interface }) else { return [interface] }
        var unknown: [String] = []
        for case .only(let names) in changes.values {
            for name in names where table.property(named: name) == nil { unknown.append("\(interface).\(name)") }
        }
        return unknown.sorted()
    }
}
