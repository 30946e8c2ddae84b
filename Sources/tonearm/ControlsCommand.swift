import ArgumentParser
import TonearmClient

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
