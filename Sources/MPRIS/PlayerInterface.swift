import DBus
import PlayerModel

// MARK: org.mpris.MediaPlayer2.Player

extension MPRISService {
    func playerInterface() -> InterfaceDescription {
        InterfaceDescription(
            name: MPRIS.player,
            methods: [
                .typed("Next") { [player] _ in
                    do throws(PlayerError) { try player.next() } catch { throw ServiceError(error) }
                },
                .typed("Previous") { [player] _ in player.previous() },
                .typed("Pause") { [player] _ in player.pause() },
                .typed("PlayPause") { [player] _ in player.togglePlayPause() },
                .typed("Stop") { [unowned self] context in
                    cancelQueueing(because: "Stop was called\(Self.by(context.sender))")
                    player.stop()
                },
                .typed("Play") { [player] _ in player.play() },
                .typed("Seek", arguments: ["Offset"]) { [unowned self] (offset: Int64, _) in
                    // MPRIS Player.Seek: "If the CanSeek property is false, this has no effect."
                    guard seekGoesToThePlayer else { return }
                    // relative to the position; any Int64 a client sends saturates instead of trapping
                    do throws(PlayerError) {
                        try player.seek(to: .saturating(microseconds: Self.saturatingSum(player.position.microseconds, offset)))
                    } catch {
                        throw ServiceError(error)
                    }
                },
                .typed("SetPosition", arguments: ["TrackId", "Position"]) { [unowned self] (track: ObjectPath, position: Int64, _) in
                    // a trackid that is not current, a negative position or one past the end, or CanSeek
                    // false: ignored (MPRIS Player.SetPosition)
                    guard seekGoesToThePlayer, let current = player.currentItem, position >= 0, track == TrackIDs.path(current.id)
                    else { return }
                    if let duration = current.duration, Duration.microseconds(position) > duration { return }
                    do throws(PlayerError) { try player.seek(to: .saturating(microseconds: position)) } catch { throw ServiceError(error) }
                },
                .deferred("OpenUri", arguments: ["Uri"]) { [unowned self] (text: String, reply: Reply<Void>) in
                    // parsed, resolved, opened and answered by MPRISService.queueURIs; a newer
                    // OpenUri is what the user wants now: walks still under way are not
                    try queueURIs([text], .open, reply: reply, cancellingOthers: "OpenUri was called\(Self.by(reply.sender))")
                },
            ],
            properties: [
                .typed("PlaybackStatus", get: { [unowned self] in playbackStatus }),
                .typed("LoopStatus", get: { [player] in
                    switch player.state.loopMode {
                    case .none: "None"
                    case .track: "Track"
                    case .queue: "Playlist"
                    }
                }, set: { [player] (value: String) in
                    switch value {
                    case "None": player.setLoopMode(.none)
                    case "Track": player.setLoopMode(.track)
                    case "Playlist": player.setLoopMode(.queue)
                    default: throw DBusError.invalidArgs("LoopStatus is None, Track or Playlist, not \(value)")
                    }
                }),
                .typed("Rate", get: { [player] in player.state.rate }, set: { [player] (rate: Double) in
                    guard rate.isFinite else {
                        throw DBusError.invalidArgs("Rate must be a finite number from \(player.configuration.minimumRate) to \(player.configuration.maximumRate) (or 0 to pause), not \(rate)")
                    }
                    // Rate 0 pauses (MPRIS: "a value of 0.0 ... should act as though Pause was called")
                    if rate == 0 { player.pause(); return }
                    do throws(PlayerError) { try player.setRate(rate) } catch {
                        // out of range is a wrong argument; a live stream's refusal, or linear playback's, is ours
                        if error.code == .rateOutOfRange { throw DBusError.invalidArgs(error.message) }
                        throw ServiceError(error)
                    }
                }),
                .typed("Shuffle", get: { [player] in player.state.isShuffled }, set: { [player] (value: Bool) in player.setShuffle(value) }),
                .typed("Metadata", get: { [unowned self] in player.currentItem.map { metadata($0) } ?? .none }),
                .typed("Volume", get: { [player] in player.state.volume }, set: { [player] (volume: Double) in
                    guard volume.isFinite else { throw DBusError.invalidArgs("Volume must be a finite number from 0 to 1, not \(volume)") }
                    // MPRIS Player.Volume: "if a negative value is passed, the volume should be set to 0.0"; the
                    // spec allows more than 1.0 but asks clients not to: the model keeps 0...1 (docs/dbus.md)
                    player.setVolume(max(volume, 0))
                }),
                .typed("Position", emitsChanged: .false, get: { [unowned self] in clientPosition(player.position) }),
                .typed("MinimumRate", get: { [player] in player.configuration.minimumRate }),
                .typed("MaximumRate", get: { [player] in player.configuration.maximumRate }),
                .typed("CanGoNext", get: { [player] in player.canGoNext }),
                .typed("CanGoPrevious", get: { [player] in player.canGoPrevious }),
                // GNOME Shell hides a player whose CanPlay is false while it has an item
                .typed("CanPlay", get: { [player] in player.currentItem != nil }),
                .typed("CanPause", get: { [player] in player.currentItem != nil }),
                .typed("CanSeek", get: { [unowned self] in canSeek }),
                .typed("CanControl", emitsChanged: .false, get: { true }),
            ],
            signals: [.typed("Seeked", Int64.self, argumentNames: ["Position"])],
            introspectionXML: MPRIS.playerXML)
    }

    /// Which Player properties each player event may change. A queue edit changes whether there
    /// is a next or previous track; the current track changing comes as its own event, and
    /// re-reading every property on each edit built the Metadata dictionary once per edit. A new
    /// current track leaves LoopStatus, Rate, Shuffle and Volume as they are (each has an event of
    /// its own). A media key's announcement is PlaybackStatus alone: re-reading every property
    /// (Metadata among them) cost more than the rest of a PlayPause (make bench).
    static let playerChanges = ChangeRules(MPRIS.player, [
        .queueChanged: .only(["CanGoNext", "CanGoPrevious"]),
        // PlaybackStatus is Stopped without a current track, CanPlay and CanPause true with one
        // (GNOME Shell hides the player otherwise)
        .currentItemChanged: .only(["PlaybackStatus", "Metadata", "CanGoNext", "CanGoPrevious", "CanPlay", "CanPause", "CanSeek"]),
        .intentChanged: .only(["PlaybackStatus"]),
        .timeControlStatusChanged: .only(["PlaybackStatus"]),
        .metadataChanged: .all,
        .durationChanged: .all,
        .rateChanged: .all,
        // while linear playback is on, nothing seeks and Next is refused
        .linearPlaybackChanged: .only(["CanGoNext", "CanSeek"]),
        // by chapter, Next has somewhere to go while a chapter follows the current one
        .nextByChapterChanged: .only(["CanGoNext"]),
        .chaptersChanged: .only(["CanGoNext"]),
        .currentChapterChanged: .only(["CanGoNext"]),
    ], rereadingAll: PlayerEventKind.stateChanges)

    private var playbackStatus: String {
        let transport = player.transport
        guard transport.hasCurrentItem else { return "Stopped" }
        switch transport.intent {
        case .stopped: return "Stopped"
        case .paused: return "Paused"
        // Playing also while waiting to play (design brief: PlaybackStatus)
        case .playing: return "Playing"
        }
    }

    /// `a + b`, Int64.min or Int64.max where it overflows (client offsets are any Int64).
    static func saturatingSum(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b < 0 ? .min : .max) : sum
    }
}
