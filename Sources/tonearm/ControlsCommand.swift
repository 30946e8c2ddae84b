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
