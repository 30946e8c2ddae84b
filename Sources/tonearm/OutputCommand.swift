import ArgumentParser
import TonearmClient

struct OutputCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "output",
        abstract: "Where the sound goes: list the devices, or move playback to one (or to the default).",
        discussion: """
            tonearm output             prints the chosen output
            tonearm output list        prints the devices: id, kind, description (* marks where it plays)
            tonearm output ID          moves playback to that device without stopping
            tonearm output default     follows the sound server's default device
            tonearm output snapcast    every room: the snapserver of tonearmd --snapcast (the
                                       item is loaded again where it was, a short gap)
            Kept across restarts: an absent device plays on the default until it comes back.
            """)
    @OptionGroup var service: ServiceOptions
    @Argument(help: ArgumentHelp("list, a device's id, or default.", valueName: "output")) var output: String?

    func run() throws {
        try service.withClient { client in
            switch output {
            case nil:
                print(try client.output())
            case "list":
                let chosen = try client.output()
                let devices = try client.outputs()
                let chosenIsThere = devices.contains { $0.id == chosen }
                print(([("default", "", "the sound server's default device", chosen == "default" || !chosenIsThere)]
                       + devices.map { ($0.id, $0.kind, $0.description, $0.id == chosen) })
                    .map { "\($0.3 ? "*" : " ") \($0.0)\t\($0.1)\t\($0.2)" }.joined(separator: "\n"))
            case let id?:
                try client.setOutput(id)
            }
        }
    }
}
