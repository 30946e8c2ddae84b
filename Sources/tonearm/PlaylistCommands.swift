import ArgumentParser
import FoundationEssentials
import TonearmClient

extension PlaylistOrder: ExpressibleByArgument {}

struct Playlists: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the playlists: number and name; * marks the active one.",
        discussion: """
            Playlists are the M3U, M3U8, PLS and XSPF files in $XDG_MUSIC_DIR/Playlists (and tonearmd --playlists) \
            and the queues saved with `tonearm save`. --order: alpha (by name, the default), modified (file modified), \
            created (file made, or first seen), played (last activated; never played first), user (as found). \
            --json prints one object (docs/command-line.md, "tonearm playlists --json").
            """)
    @OptionGroup var service: ServiceOptions
    @Flag(name: .long, help: "Print JSON.") var json = false
    @Option(name: .long, help: ArgumentHelp("alpha, modified, created, played or user.", valueName: "order"))
    var order: PlaylistOrder = .alpha

    func run() throws {
        let (list, active) = try service.withClient { client in (try client.playlists(order: order), try client.activePlaylist()) }
        if json {
            print(try PlaylistsJSON.render(list, active: active, order: order))
            return
        }
        let width = String(list.count).count
        for (index, playlist) in list.enumerated() {
            let marker = playlist.id == active?.id ? "*" : " "
            print("\(marker) \(String(index + 1).leftPadded(to: width))  \(playlist.name)")
        }
    }
}

/// `playlists --json`: `{"version": 1, "order": ..., "active": id or null, "playlists": [{"number", "id", "name", "active"}]}`.
/// Add keys, never change or remove one.
enum PlaylistsJSON {
    struct Entry: Encodable {
        var number: Int
        var id: String
        var name: String
        var active: Bool
    }

    struct List: Encodable {
        var version = 1
        var order: String
        var active: String?
        var playlists: [Entry]

        enum CodingKeys: String, CodingKey { case version, order, active, playlists }

        // null for no active playlist: every key is always there
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(version, forKey: .version)
            try c.encode(order, forKey: .order)
            try c.encode(active, forKey: .active)
            try c.encode(playlists, forKey: .playlists)
        }
    }

    static func render(_ list: [Playlist], active: Playlist?, order: PlaylistOrder) throws -> String {
        let value = List(order: order.rawValue, active: active?.id.rawValue, playlists: list.enumerated().map { index, playlist in
            Entry(number: index + 1, id: playlist.id.rawValue, name: playlist.name, active: playlist.id == active?.id)
        })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

struct PlaylistCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playlist",
        abstract: "Play a playlist: its entries replace the queue and the first plays.",
        discussion: "N is its number in `tonearm playlists` (in the same --order); else NAME is its name (any case, when only one is so called).")
    @OptionGroup var service: ServiceOptions
    @Option(name: .long, help: ArgumentHelp("The order N counts in: alpha, modified, created, played or user.", valueName: "order"))
    var order: PlaylistOrder = .alpha
    @Argument(help: ArgumentHelp("The playlist's number, from 1, or its name.", valueName: "N|NAME")) var playlist: String

    func validate() throws {
        if playlist.isEmpty { throw ValidationError("playlist needs a number or a name") }
    }

    func run() throws {
        try service.withClient { client in try client.activate(try client.playlist(named: playlist, order: order)) }
    }
}

struct Save: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Save the queue as a playlist called NAME (listed by `tonearm playlists`; saving again under a name replaces it).")
    @OptionGroup var service: ServiceOptions
    @Argument(help: ArgumentHelp("The playlist's name: no '/', no control characters, not starting with '.'.", valueName: "NAME"))
    var name: String

    func run() throws { try service.withClient { try $0.saveQueue(as: name) } }
}
