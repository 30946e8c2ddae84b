import ArgumentParser
import TonearmClient

struct Linear: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Linear playback: tracks play through, with no seeking, next or rate change (on), or freely (off).",
        discussion: """
            With no argument, prints on or off. While on, seek, next and rate are refused (status 1); prev, \
            pause and stop still work. Kept across restarts.
            """)
    @OptionGroup var service: ServiceOptions
    @Argument(help: "on or off.") var state: Switch?

    func run() throws {
        try service.withClient { client in
            if let state {
                try client.setLinearPlayback(state == .on)
            } else {
                print(try client.linearPlayback() ? "on" : "off")
            }
        }
    }
}

struct Places: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Kept places: a long track (over 20 minutes) opened again starts where it was left (on), or at its start (off).",
        discussion: """
            With no argument, prints on or off. play says "resuming at H:MM:SS" when a track starts at its place. \
            Off keeps the places there are for when it is on again. Kept across restarts.
            """)
    @OptionGroup var service: ServiceOptions
    @Argument(help: "on or off.") var state: Switch?

    func run() throws {
        try service.withClient { client in
            if let state {
                try client.setResumePlaces(state == .on)
            } else {
                print(try client.resumePlaces() ? "on" : "off")
            }
        }
    }
}

struct Controls: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Whether the video window shows its bar (title, position, play state) when the pointer moves over it.",
        discussion: "With no argument, prints on or off.")
    @OptionGroup var service: ServiceOptions
    @Argument(help: "on or off.") var state: Switch?

    func run() throws {
        try service.withClient { client in
            if let state {
                try client.setControlsVisible(state == .on)
            } else {
                print(try client.controlsVisible() ? "on" : "off")
            }
        }
    }
}
