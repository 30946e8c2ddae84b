import DBus
import Logging
import PlayerModel

/// The video's part of the D-Bus surface (README, "Video"): on org.mpris.MediaPlayer2,
/// `Fullscreen`, `CanSetFullscreen`, `CanRaise` and `Raise`, which the MPRIS spec puts on the root
/// interface; on io.github.tonearm.Player1, `HasVideo` and `VideoSize`. Each reads the player's
/// `VideoState`; `.videoChanged` announces what changed.
extension MPRISService {
    static let videoRootProperties = ["Fullscreen", "CanSetFullscreen", "CanRaise"]
    static let videoExtensionProperties = ["HasVideo", "VideoSize"]

    /// `Raise`: shows and focuses the window; with none (CanRaise false) it does nothing, as the
    /// spec allows, and the log says so once the answer has left.
    static func raise(_ player: Player, logger: Logger) {
        if !player.raiseWindow() { player.whenAnswered { logger.info("asked to raise: no window") } }
    }

    static func rootVideoProperties(_ player: Player) -> [InterfaceDescription.Property] {
        [
            .init("Fullscreen", "b", get: { .bool(player.video.isFullscreen) }, set: { value, _ in
                guard let on = value.boolValue else { throw DBusError.invalidArgs("Fullscreen takes a boolean") }
                // announced when the window says it changed
                if !player.setFullscreen(on), on {
                    throw DBusError.notSupported("there is no window to make fullscreen (CanSetFullscreen is false)")
                }
            }),
            .init("CanSetFullscreen", "b") { .bool(player.video.hasWindow) },
            .init("CanRaise", "b") { .bool(player.video.hasWindow) },
        ]
    }

    static func extensionVideoProperties(_ player: Player) -> [InterfaceDescription.Property] {
        [
            .init("HasVideo", "b") { .bool(player.video.hasVideo) },
            .init("VideoSize", "(ii)") {
                let size = player.video.size
                return .structure([.int32(Int32(clamping: size.width)), .int32(Int32(clamping: size.height))])
            },
        ]
    }
}
