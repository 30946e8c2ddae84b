import EngineLink
import GStreamer
import PlayerModel

/// Tag names from gst/gsttaglist.h, mapped onto the model's metadata.
enum TagMapping {
    /// The tags as the model's metadata; an embedded image is stored in `covers` and only its
    /// file's URL is kept (none without a cache).
    static func metadata(_ tags: TagList, covers: CoverCache?) -> Metadata {
        var metadata = Metadata()
        metadata.title = tags.string("title")
        metadata.artists = tags.strings("artist")
        metadata.album = tags.string("album")
        metadata.albumArtists = tags.strings("album-artist")
        metadata.trackNumber = tags.unsigned("track-number").map { Int($0) }
        metadata.discNumber = tags.unsigned("album-disc-number").map { Int($0) }
        metadata.genres = tags.strings("genre")
        metadata.date = tags.date("datetime") ?? tags.date("date")
        metadata.comment = tags.string("comment") ?? tags.string("description")
        metadata.audioCodec = tags.string("audio-codec")
        metadata.videoCodec = tags.string("video-codec")
        metadata.bitrate = (tags.unsigned("bitrate") ?? tags.unsigned("nominal-bitrate")).map { Int($0) }
        metadata.organization = tags.string("organization")
        if let covers, let image = tags.samples("image").first ?? tags.samples("preview-image").first {
            metadata.coverURL = covers.store(image.data, mediaType: image.mediaType)
        }
        return metadata
    }
}
