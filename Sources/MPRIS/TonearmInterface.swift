import DBus
import PlayerModel
import Playlists

// MARK: io.github.tonearm.Player1

/// `(ss)`: an error's D-Bus name and its message.
typealias ErrorValue = DBusPair<String, String>
/// `(xx)`: a time range, start and end in microseconds.
typealias RangeValue = DBusPair<Int64, Int64>
/// `(xxs)`: a chapter, its start and end in microseconds and its title.
typealias ChapterValue = DBusTriple<Int64, Int64, String>
/// `(xs)`: a synced lyric line, its time in microseconds and its text.
typealias LyricLineValue = DBusPair<Int64, String>

extension MPRISService {
    func tonearmInterface() -> InterfaceDescription {
        InterfaceDescription(
            name: MPRIS.tonearm,
            methods: [
                .typed("SeekTo", arguments: ["position", "toleranceBefore", "toleranceAfter"]) { [unowned self]
                    (position: Int64, before: Int64, after: Int64, _) in
                    guard position >= 0, before >= 0, after >= 0 else {
                        throw DBusError.invalidArgs("position and tolerances must not be negative (microseconds)")
                    }
                    guard player.currentItem != nil else { throw ServiceError(PlayerError(.noCurrentItem, "nothing to seek: no current track")) }
                    // as MPRIS Seek: no effect while CanSeek is false (a stream not loaded yet, a live one
                    // with no window to seek in), refused while linear playback makes it false
                    guard seekGoesToThePlayer else { return }
                    do throws(PlayerError) {
                        try player.seek(to: .saturating(microseconds: position), toleranceBefore: .saturating(microseconds: before),
                                        toleranceAfter: .saturating(microseconds: after))
                    } catch {
                        throw ServiceError(error)
                    }
                },
                .typed("GoToChapter", arguments: ["index"]) { [player] (index: Int32, _) in
                    do throws(PlayerError) {
                        try player.goToChapter(Int(index))  // any Int32 is checked against the chapters: none traps
                    } catch {
                        throw ServiceError(error)
                    }
                },
                .typed("Retry") { [player] _ in
                    do {
                        try player.retry()
                    } catch let error as PlayerError where error.code == .nothingToRetry {
                        // nothing has failed: nothing to do (dbus/io.github.tonearm.Player1.xml)
                    } catch {
                        throw ServiceError(error)
                    }
                },
                .typed("Clear") { [unowned self] context in
                    cancelQueueing(because: "Clear was called\(Self.by(context.sender))")
                    player.clear()
                },
                .deferred("SaveQueue", arguments: ["name"]) { [unowned self] (name: String, reply: Reply<Void>) in
                    // a file name in the saved-queues folder: no path, nothing hidden, no control characters
                    guard !name.isEmpty, name.utf8.count <= 200, !name.hasPrefix("."), !name.contains("/"),
                          !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                        throw DBusError.invalidArgs("a saved queue's name is 1 to 200 bytes, without '/', control characters or a leading '.': \(name.prefix(64))")
                    }
                    guard let catalog = options.playlists else { throw ServiceError("Failed", "this tonearmd keeps no playlists") }
                    let uris = player.items.map(\.uri)
                    let queue = connection.queue
                    catalog.async {
                        let saved = Result { () throws(PlaylistError) in try catalog.save(name: name, entries: uris) }
                        queue.async {
                            switch saved {
                            case .success: reply.succeed()
                            case .failure(let error): reply.fail(ServiceError("Failed", error.message))
                            }
                        }
                    }
                },
                .deferred("Enqueue", arguments: ["uris", "playNow"], returning: ObjectPathList.self) { [unowned self]
                    (texts: [String], playNow: Bool, reply) in
                    try queueURIs(texts, .enqueue(playNow: playNow), reply: reply)
                },
                .deferred("Insert", arguments: ["uris", "afterTrack"], returning: ObjectPathList.self) { [unowned self]
                    (texts: [String], afterTrack: ObjectPath, reply) in
                    // the anchor is checked now, and again once resolved: the queue may change during the walk
                    try queueURIs(texts, .insert(try placement(after: afterTrack), setAsCurrent: false), reply: reply)
                },
                .typed("Move", arguments: ["trackid", "afterTrack"]) { [unowned self] (track: ObjectPath, afterTrack: ObjectPath, _) in
                    guard let id = TrackIDs.item(track) else {
                        throw ServiceError(PlayerError(.noSuchItem, "no track \(track.rawValue) in the queue"))
                    }
                    let placement = try placement(after: afterTrack)
                    do {
                        if case .after(let anchor) = placement { try player.move(id, after: anchor) } else { try player.move(id, after: nil) }
                    } catch {
                        throw ServiceError(error)
                    }
                },
            ] + bedtimeMethods() + Self.audioMethods(player),
            properties: [
                .typed("ItemStatus", get: { [player] in player.currentItem?.status.name ?? "unknown" }),
                .typed("ItemError", get: { [unowned self] in
                    guard let error = player.currentItem?.error else { return ErrorValue("", "") }
                    return ErrorValue(errorName(error), error.message)
                }),
                .typed("TimeControlStatus", get: { [player] in player.transport.timeControlStatus.name }),
                .typed("WaitingReason", get: { [player] in player.transport.timeControlStatus.waitingReason?.rawValue ?? "" }),
                .typed("BufferingPercent", get: { [player] in Int32(player.currentItem?.bufferingPercent ?? 100) }),
                .typed("LoadedRanges", get: { [player] in
                    (player.currentItem?.loadedRanges ?? []).map { RangeValue($0.start.microseconds, $0.end.microseconds) }
                }),
                .typed("IsLive", get: { [player] in player.currentItem?.isLive ?? false }),
                .typed("Muted", get: { [player] in player.state.isMuted }, set: { [player] (muted: Bool) in player.setMuted(muted) }),
                .typed("LinearPlayback", get: { [player] in player.linearPlayback },
                       set: { [player] (on: Bool) in player.setLinearPlayback(on) }),
                .typed("ResumePlaces", get: { [player] in player.resumePlaces },
                       set: { [player] (on: Bool) in player.setResumePlaces(on) }),
                .typed("ResumedFrom", get: { [player] in player.resumedFrom?.microseconds ?? 0 }),
                .typed("Chapters", get: { [player] in Self.chapterValues(player.chapters, length: player.currentItem?.duration) }),
                .typed("CurrentChapter", get: { [player] in Int32(clamping: player.currentChapter ?? -1) }),
                .typed("NextByChapter", get: { [player] in player.nextByChapter },
                       set: { [player] (on: Bool) in player.setNextByChapter(on) }),
                .typed("SyncedLyrics", get: { [player] in
                    (player.currentItem?.metadata.sidecarLyrics?.lines ?? []).map { LyricLineValue($0.time.microseconds, $0.text) }
                }),
            ] + Self.extensionVideoProperties(player) + bedtimeProperties() + Self.audioProperties(player)
                + Self.outputProperties(player)
                + Self.crossfadeProperties(player),
            signals: [
                .typed("PlayedToEnd", ObjectPath.self, argumentNames: ["trackid"]),
                .typed("ItemFailed", ObjectPath.self, String.self, String.self, argumentNames: ["trackid", "errorName", "message"]),
                .typed("RateChanged", Double.self, String.self, argumentNames: ["rate", "reason"]),
                .typed("GapSkipped", ObjectPath.self, Int64.self, Int64.self, argumentNames: ["trackid", "position", "length"]),
                .typed("WalkProgress", String.self, UInt32.self, argumentNames: ["uri", "files"]),
            ],
            introspectionXML: MPRIS.tonearmXML)
    }

    /// Chapters as clients read them: an end the file did not give is the next chapter's start, the
    /// last one's the track's length, or -1 while that is not known.
    static func chapterValues(_ chapters: [Chapter], length: Duration?) -> [ChapterValue] {
        chapters.enumerated().map { index, chapter in
            let end = chapter.end ?? (index + 1 < chapters.count ? chapters[index + 1].start : length)
            return ChapterValue(chapter.start.microseconds, end?.microseconds ?? -1, chapter.title)
        }
    }

    /// Which of the extension's properties each player event may change. A new current track
    /// changes all of them but Muted; a media key only what the transport does.
    static let tonearmChanges = ChangeRules(MPRIS.tonearm, [
        .currentItemChanged: .only(["ItemStatus", "ItemError", "TimeControlStatus", "WaitingReason", "BufferingPercent",
                                    "LoadedRanges", "IsLive", "ResumedFrom", "Chapters", "CurrentChapter", "SyncedLyrics"]),
        // Play after Stop loads the item again, from its kept place
        .intentChanged: .only(["TimeControlStatus", "WaitingReason", "ResumedFrom"]),
        .timeControlStatusChanged: .only(["TimeControlStatus", "WaitingReason"]),
        .itemFailed: .all,
        .videoChanged: .only(["HasVideo", "VideoSize", "ControlsVisible", "VideoGravity", "PictureInPicture"]),
        .stopAfterCurrentChanged: .only(["StopAfterCurrent"]),
        .sleepTimerChanged: .only(["SleepTimerDeadline"]),
        .audioChanged: .only(audioPropertyNames + crossfadePropertyNames),
        .outputsChanged: .only(outputPropertyNames),
        .linearPlaybackChanged: .only(["LinearPlayback"]),
        .resumePlacesChanged: .only(["ResumePlaces"]),
        .chaptersChanged: .only(["Chapters", "CurrentChapter"]),
        .durationChanged: .only(["Chapters"]),  // the last chapter ends where the track does
        .currentChapterChanged: .only(["CurrentChapter"]),
        .nextByChapterChanged: .only(["NextByChapter"]),
        .metadataChanged: .only(["SyncedLyrics"]),  // a sidecar .lrc comes as the item's tags
    ], rereadingAll: PlayerEventKind.stateChanges)
}
