import PlayerModel

/// The state of one load of one item in the engine: made fresh when a load (or a crossfade's start)
/// makes its item current, dropped when the engine retires it, and derived for the next item at a
/// gapless switch (`switched(to:_:)`) or a video loop's lap (`lapped(as:)`), so that nothing of an
/// item outlives it by a field someone forgot to reset (issue 37: such fields were reset by hand in
/// four places). Owned by `GStreamerEngine`, confined to its queue like the rest of its state.
struct Load {
    /// What the player calls this load: the engine's events for it carry it.
    var generation: Generation
    /// The item's URI: what errors name, what tells a file from a stream.
    var uri: MediaURI
    /// What a missing-plugin message said was missing: the error that follows is blamed on it.
    var missingPlugin: String?
    /// The load was reported live (see `.asyncDone` in `GStreamerEngine.handle`).
    var reportedLive = false
    /// The load's preroll is over (its first ASYNC_DONE, or NO_PREROLL).
    var prerolled = false
    /// The load goes on to PLAYING at the end of its preroll (`.playAfterPreroll`).
    var playsAfterPreroll = false
    /// The answer to the request of the item's own URI, when it went through souphttpsrc.
    var itemResponse: (contentType: String?, contentLength: Int?)?
    /// HTTP responses of the load that failed (status 400 and up) and were not answered well
    /// since, newest last, at most `maximumFailedResponses`: what a network error or an early end
    /// of the stream is blamed on.
    private(set) var failedResponses: [ErrorMapping.HTTPFailure] = []
    static let maximumFailedResponses = 8
    /// A crossfade's item, whose preroll is told as `.streamStarted` (the moment the player makes
    /// it current), not as `.asyncDone`; false once told.
    var announcesAtPreroll = false
    /// The rate the player last asked for with a seek: a redraw of a paused frame keeps it.
    var rate = 1.0
    /// The sequence number of the last seek sent: an ASYNC_DONE made before it (a pause's, still
    /// on the bus when the seek went) is not the seek's end, and is not told as one.
    var seekSeqnum: UInt32?
    /// A redraw of the paused frame is under way (`VideoOutput.showControls`): its ASYNC_DONE and state
    /// changes are the engine's own, not the player's.
    var redrawing = false
    /// A redraw was asked while one was under way (the software path scales to a new size after
    /// the bar's redraw began): it runs again once that one ends.
    var redrawAgain = false
    /// The position the player was last told (a state change's, a seek's, a snapshot's): a redraw
    /// of the paused frame goes back to it, not to a new query, which can answer otherwise while
    /// paused (the bin's query takes the furthest sink: the audio sink's clock at the pause, or a
    /// late video frame's time, as under a sanitizer's slowdown).
    var toldPosition: Int64?
    /// The chapters last told for this load: a table of contents comes from each sink that got it,
    /// and again after a seek, and is told only when it differs (`GStreamerEngine.found(chapters:)`).
    var chapters: [Chapter] = []

    init(_ uri: MediaURI, _ generation: Generation, announcesAtPreroll: Bool = false) {
        self.uri = uri
        self.generation = generation
        self.announcesAtPreroll = announcesAtPreroll
    }

    /// Takes an HTTP response the source saw (the `http-headers` message): the item's own, when it
    /// succeeded, is kept as `itemResponse`; a failure (400 and up) is remembered until the same URI
    /// is answered again, the oldest let go past `maximumFailedResponses`.
    mutating func heard(response uri: String, status: Int, contentType: String?, contentLength: Int?) {
        if uri == self.uri.string, status < 300 { itemResponse = (contentType, contentLength) }
        failedResponses.removeAll { $0.uri == uri }
        if status >= 400 {
            failedResponses.append(ErrorMapping.HTTPFailure(uri: uri, status: status))
            if failedResponses.count > Self.maximumFailedResponses { failedResponses.removeFirst() }
        }
    }

    /// The next item's load after a gapless switch (the STREAM_START that follows about-to-finish:
    /// trap 2), in the same pipeline. What was the item's goes; what was the pipeline's stays:
    /// - `missingPlugin`, `reportedLive`, `itemResponse`, `failedResponses`: the item's, learnt from
    ///   its own stream and requests; the next item's come from its own.
    /// - `prerolled`, `playsAfterPreroll`: the pipeline's preroll, which a gapless switch does not
    ///   repeat (the next item plays on in a pipeline that prerolled; it goes to PLAYING by itself
    ///   only at a preroll, which is over).
    /// - `rate`: the rate of the pipeline's last seek, which a redraw of a paused frame repeats.
    /// - `redrawing`, `redrawAgain`: a redraw is the pipeline's own flushing seek, whose ASYNC_DONE
    ///   comes on this pipeline whatever item plays.
    /// - `toldPosition`: kept as it was (the snapshot told with the switch replaces it at once when
    ///   the pipeline answers the position query).
    /// - `announcesAtPreroll`: false; a crossfade's item is announced at its preroll, before any
    ///   gapless switch can follow it (the engine ignores STREAM_START while it is true).
    func switched(to uri: MediaURI, _ generation: Generation) -> Load {
        var next = Load(uri, generation)
        next.prerolled = prerolled
        next.playsAfterPreroll = playsAfterPreroll
        next.rate = rate
        next.redrawing = redrawing
        next.redrawAgain = redrawAgain
        next.toldPosition = toldPosition
        return next
    }

    /// The next lap of a video looping on itself by segment seeks (`SegmentLoop`):
    /// the same item in the same pipeline with the same stream, so everything stays but the
    /// generation; a crossfade's announcement, if one was still due, is not this lap's.
    func lapped(as generation: Generation) -> Load {
        var next = self
        next.generation = generation
        next.announcesAtPreroll = false
        return next
    }
}
