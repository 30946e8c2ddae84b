import GStreamer
import PlayerModel

/// Turns a GStreamer error into an item error with a kind and a message a person can act on.
enum ErrorMapping {
    // Codes from gst/gsterror.h.
    private static let resourceNotFound: Int32 = 3, resourceOpenRead: Int32 = 5, resourceRead: Int32 = 9
    private static let resourceNotAuthorized: Int32 = 15, resourceBusy: Int32 = 4, resourceOpenWrite: Int32 = 6
    private static let streamTypeNotFound: Int32 = 4, streamWrongType: Int32 = 5, streamCodecNotFound: Int32 = 6
    private static let coreMissingPlugin: Int32 = 12, streamFailed: Int32 = 1

    /// An HTTP response that failed; `uri` is what was asked for (the item's, or a segment of it).
    struct HTTPFailure: Equatable {
        var uri: String
        var status: Int
    }

    /// A status a server may stop answering soon: a timeout, too many requests, a server error.
    static func isTransient(status: Int) -> Bool { status == 408 || status == 429 || status >= 500 }

    /// "HTTP 500 (Internal Server Error) for URL", naming the segment and the item when they differ.
    static func describe(_ failure: HTTPFailure, uri: MediaURI) -> String {
        let reason = HTTPStatus.reason(failure.status).map { " (\($0))" } ?? ""
        let part = failure.uri == uri.string ? "" : " (part of \(uri.displayPath))"
        return "HTTP \(failure.status)\(reason) for \(failure.uri)\(part)"
    }

    /// The stream ended early because a request kept failing (hlsdemux's EOS after a segment's retries).
    static func endedByHTTPFailure(_ failure: HTTPFailure, uri: MediaURI) -> ItemError {
        ItemError(.network, "network error: \(describe(failure, uri: uri)); the stream stopped there",
                  isTransient: isTransient(status: failure.status))
    }

    /// A server answered 200 with bytes no demuxer recognises.
    static func notMedia(uri: MediaURI, contentType: String?) -> ItemError {
        let type = contentType.map { "Content-Type \($0)" } ?? "no Content-Type"
        return ItemError(.network, "network error: \(uri.string) answered HTTP 200 with \(type), which is not media GStreamer "
                         + "recognises (a network's login page, or not a stream's address)")
    }

    static func itemError(_ error: GStreamerError, uri: MediaURI, missingPlugin: String?, http: HTTPFailure? = nil) -> ItemError {
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
                if let http {
                    return ItemError(.network, "network error: \(describe(http, uri: uri))", isTransient: isTransient(status: http.status))
                }
                // no answer at all: refused, unreachable, timed out or cut off (a refused
                // connection is not worth a retry; the others are)
                let message = error.message.lowercased()
                let refused = message.contains("refused") || message.contains("resolve")
                return ItemError(.network, "network error for \(name): \(error.message)", isTransient: !refused)
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
                if let http {
                    return ItemError(.network, "network error: \(describe(http, uri: uri))", isTransient: isTransient(status: http.status))
                }
                // but a parser or demuxer that stops with "reason not-linked" had nothing downstream
                // take its stream (GST_FLOW_NOT_LINKED, gstbaseparse.c gst_base_parse_loop): what
                // came is not a stream this player can play here, which no reconnect mends (bytes
                // typefound as H.263 reconnected for as long as the attempts lasted: NetworkServiceTests)
                if error.debug?.contains("reason not-linked") == true {
                    return ItemError(.unsupportedFormat, "cannot play \(name): none of its streams can be played here "
                                     + "(its stream stopped, not-linked)")
                }
                return ItemError(.network, "network error for \(name): could not read the stream (\(error.message))", isTransient: true)
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

/// The reason phrases of the HTTP statuses a media server answers (RFC 9110, section 15).
enum HTTPStatus {
    static func reason(_ status: Int) -> String? {
        switch status {
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 408: "Request Timeout"
        case 410: "Gone"
        case 416: "Range Not Satisfiable"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: nil
        }
    }
}
