import ArgumentParser
import TonearmClient

/// A setting of the service's that is on or off: set with `on` or `off`, printed with no argument.
protocol OnOffCommand: ParsableCommand {
    var service: ServiceOptions { get }
    var state: Switch? { get }
    static func read(_ client: TonearmClient) throws -> Bool
    static func write(_ on: Bool, to client: TonearmClient) throws
}

extension OnOffCommand {
    func run() throws {
        try service.withClient { client in
            if let state {
                try Self.write(state == .on, to: client)
            } else {
                print(try Self.read(client) ? "on" : "off")
            }
        }
    }
}

struct Linear: OnOffCommand {
    static let configuration = CommandConfiguration(
        abstract: "Linear playback: tracks play through, with no seeking, next or rate change (on), or freely (off).",
        discussion: """
            With no argument, prints on or off. While on, seek, next and rate are refused (status 1); prev, \
            pause and stop still work. Kept across restarts.
            """)
    @OptionGroup var service: ServiceOptions
    @Argument(help: "on or off.") var state: Switch?

    static func read(_ client: TonearmClient) throws -> Bool { try client.linearPlayback() }
    static func write(_ on: Bool, to client: TonearmClient) throws { try client.setLinearPlayback(on) }
}

struct Places: OnOffCommand {
    static let configuration = CommandConfiguration(
        abstract: "Kept places: a long track (over 20 minutes) opened again starts where it was left (on), or at its start (off).",
        discussion: """
            With no argument, prints on or off. play says "resuming at H:MM:SS" when a track starts at its place. \
            Off keeps the places there are for when it is on again. Kept across restarts.
            """)
    @OptionGroup var service: ServiceOptions
    @Argument(help: "on or off.") var state: Switch?

    static func read(_ client: TonearmClient) throws -> Bool { try client.resumePlaces() }
    static func write(_ on: Bool, to client: TonearmClient) throws { try client.setResumePlaces(on) }
}

struct Controls: OnOffCommand {
    static let configuration = CommandConfiguration(
        abstract: "Whether the video window shows its bar (title, position, play state) when the pointer moves over it.",
        discussion: "With no argument, prints on or off.")
    @OptionGroup var service: ServiceOptions
    @Argument(help: "on or off.") var state: Switch?

    static func read(_ client: TonearmClient) throws -> Bool { try client.controlsVisible() }
    static func write(_ on: Bool, to client: TonearmClient) throws { try client.setControlsVisible(on) }
}

struct NextByChapter: OnOffCommand {
    static let configuration = CommandConfiguration(
        commandName: "next-by-chapter",
        abstract: "Next and prev (and media keys) by chapter inside a track that has chapters (on), or by track (off).",
        discussion: """
            With no argument, prints on or off. While on, next goes to the next chapter, and in the last to the next \
            track; prev goes back to the chapter's start past 3 s, else to the chapter before, and in the first \
            chapter to the previous track. Off by default; kept across restarts.
            """)
    @OptionGroup var service: ServiceOptions
    @Argument(help: "on or off.") var state: Switch?

    static func read(_ client: TonearmClient) throws -> Bool { try client.nextByChapter() }
    static func write(_ on: Bool, to client: TonearmClient) throws { try client.setNextByChapter(on) }
}
