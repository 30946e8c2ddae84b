/// What was learnt of an item's media (its tags, its length), saved with the queue so that after a
/// restart its `Metadata` and the track list show at once, without GStreamer reading the file
/// again (issue 30: at rest, GStreamer is not initialised until an item needs it). Tags that say
/// what is happening now rather than what the file is are left out: a station's stream title, and
/// the bitrate, which a variable-bitrate file's parser reports again as it plays (a write each time),
/// and lyrics, up to 64 KiB of text each, which the file gives again when it plays.
public struct SavedMetadata: Sendable, Equatable {
    public var tags: Metadata
    public var duration: Duration?

    public init(tags: Metadata, duration: Duration?) {
        self.tags = tags
        self.duration = duration
    }

    /// What of `item` is saved; nil when nothing is known of it yet, or it is live (a station's
    /// tags describe what it plays now).
    public init?(_ item: Item) {
        guard !item.isLive else { return nil }
        var tags = item.metadata
        tags.streamTitle = nil
        tags.bitrate = nil
        // up to 64 KiB each: read again from the file (and its .lrc) when it plays
        tags.lyrics = nil
        tags.sidecarLyrics = nil
        guard !tags.isEmpty || item.duration != nil else { return nil }
        self.init(tags: tags, duration: item.duration)
    }
}
