import ArgumentParser
import TonearmClient

struct Crossfade: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Crossfade from each track into the next over 0 to 12 seconds; `off` (0) plays them gaplessly.",
        discussion: """
            Tracks of one album played in order stay gapless unless --albums is given (--no-albums \
            turns that off again). With no argument, prints the setting. Kept across restarts.
            """)
    @OptionGroup var service: ServiceOptions
    @Argument(help: ArgumentHelp("Seconds, 0 to 12, or off.", valueName: "seconds")) var length: String?
    @Flag(inversion: .prefixedNo, help: "Whether tracks of one album played in order crossfade too.") var albums: Bool?

    func validate() throws { _ = try seconds() }

    /// nil: unchanged.
    private func seconds() throws -> Double? {
        guard let length else { return nil }
        if length == "off" { return 0 }
        guard let seconds = Double(length), seconds.isFinite, (0...12).contains(seconds) else {
            throw ValidationError("the crossfade is a number of seconds from 0 to 12, or off")
        }
        return seconds
    }

    func run() throws {
        let seconds = try seconds()
        try service.withClient { client in
            if seconds == nil && albums == nil {
                guard let crossfade = try client.status().crossfade else {
                    throw ClientError(.unexpectedReply, "this tonearmd has no crossfade")
                }
                print(Format.crossfade(crossfade))
            } else {
                try client.setCrossfade(seconds: seconds, albums: albums)
            }
        }
    }
}

extension Format {
    /// "3 s"; "2.5 s, albums too"; "off".
    static func crossfade(_ crossfade: CrossfadeStatus) -> String {
        guard crossfade.seconds > 0 else { return "off" }
        let rounded = (crossfade.seconds * 10).rounded() / 10
        let text = rounded == rounded.rounded() ? "\(Int(rounded))" : "\(rounded)"
        return "\(text) s" + (crossfade.albums ? ", albums too" : "")
    }
}
