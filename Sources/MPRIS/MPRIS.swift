import DBus

/// Names of the MPRIS surface.
enum MPRIS {
    static let busName = "org.mpris.MediaPlayer2.tonearm"
    static let path: ObjectPath = "/org/mpris/MediaPlayer2"
    static let root = "org.mpris.MediaPlayer2"
    static let player = "org.mpris.MediaPlayer2.Player"
    static let trackList = "org.mpris.MediaPlayer2.TrackList"
    static let playlists = "org.mpris.MediaPlayer2.Playlists"
    static let tonearm = "io.github.tonearm.Player1"
    /// TrackList's "after nothing" (the MPRIS spec's one path under /org/mpris for tracks).
    static let noTrack: ObjectPath = "/org/mpris/MediaPlayer2/TrackList/NoTrack"

    /// The interface XML of dbus/, compiled in (Package.swift's embedInCode).
    static func xml(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
    static var rootXML: String { xml(PackageResources.org_mpris_MediaPlayer2_xml) }
    static var playerXML: String { xml(PackageResources.org_mpris_MediaPlayer2_Player_xml) }
    static var trackListXML: String { xml(PackageResources.org_mpris_MediaPlayer2_TrackList_xml) }
    static var playlistsXML: String { xml(PackageResources.org_mpris_MediaPlayer2_Playlists_xml) }
    static var tonearmXML: String { xml(PackageResources.io_github_tonearm_Player1_xml) }
}

/// The XML files of dbus/, for tests that hold the tables against them.
public enum InterfaceFiles {
    public static var all: [String: String] {
        [MPRIS.root: MPRIS.rootXML, MPRIS.player: MPRIS.playerXML, MPRIS.trackList: MPRIS.trackListXML,
         MPRIS.playlists: MPRIS.playlistsXML, MPRIS.tonearm: MPRIS.tonearmXML]
    }
}
