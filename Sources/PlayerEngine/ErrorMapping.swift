import GStreamer
import PlayerModel

/// Turns a GStreamer error into an item error with a kind and a message a person can act on.
enum ErrorMapping {
    // Codes from gst/gsterror.h.
    private static let resourceNotFound: Int32 = 3, resourceOpenRead: Int32 = 5, resourceRead: Int32 = 9
    private static let resourceNotAuthorized: Int32 = 15, resourceBusy: Int32 = 4, resourceOpenWrite: Int32 = 6
    private static let streamTypeNotFound: Int32 = 4, streamWrongType: Int32 = 5, streamCodecNotFound: Int32 = 6
    private static let coreMissingPlugin: Int32 = 12, streamFailed: Int32 = 1

    static func itemError(_ error: GStreamerError, uri: MediaURI, missingPlugin: String?) -> ItemError {
        let name = uri.displayPath
        let source = error.source ?? ""
        if let missingPlugin {
            return ItemError(.missingDecoder,
                             "cannot play \(name): \(missingPlugin) is not installed (install the GStreamer plugin package that provides it)")
        }
        switch error.domain {
        case GStreamerError.resourceDomain:
            // any resource error of the sink (a device gone, a sound server that died, a full disk
            // under a filesink) is the output's, not the item's
            if source.contains("sink") {
                return ItemError(.output, "the audio output failed: \(error.message)")
            }
            if !uri.isFile {
                return ItemError(.network, "network error for \(name): \(error.message)")
            }
            if error.code == resourceNotAuthorized {
                return ItemError(.permission, "permission denied: \(name)")
            }
            if error.code == resourceNotFound || error.code == resourceOpenRead {
                return ItemError(.notFound, "no such file: \(name)")
            }
            return ItemError(.decode, "cannot read \(name): \(error.message)")
        case GStreamerError.streamDomain:
            switch error.code {
            case streamFailed where !uri.isFile:
                // a source that cannot connect stops the flow: "internal data stream error"
                return ItemError(.network, "network error for \(name): could not read the stream (\(error.message))")
            case streamTypeNotFound, streamWrongType:
                return ItemError(.unsupportedFormat, "cannot play \(name): not a media format GStreamer recognises")
            case streamCodecNotFound:
                return ItemError(.missingDecoder, "cannot play \(name): no decoder for its format is installed (\(error.message))")
            default:
                return ItemError(.decode, "cannot decode \(name): \(error.message)")
            }
        case GStreamerError.coreDomain where error.code == coreMissingPlugin:
            return ItemError(.missingDecoder, "cannot play \(name): \(error.message)")
        default:
            return ItemError(.other, "cannot play \(name): \(error.message)")
        }
    }
}
