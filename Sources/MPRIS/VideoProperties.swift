import DBus
import Logging
import PlayerModel

/// A video's size on the wire: `(ii)`, width and height.
typealias SizeValue = DBusPair<Int32, Int32>

/// The video's part of the D-Bus surface (docs/video.md): on org.mpris.MediaPlayer2,
/// `Fullscreen`, `CanSetFullscreen`, `CanRaise` and `Raise`, which the MPRIS spec puts on the root
/// interface; on io.github.tonearm.Player1, `HasVideo`, `VideoSize` and `ControlsVisible`. Each reads the player's
/// `VideoState`; `.videoChanged` announces what changed (the change rules of both interfaces).
extension MPRISService {
    /// `Raise`: shows and focuses the window; with none (CanRaise false) it does nothing, as the
    /// spec allows, and the log says so once the answer has left.
    static func raise(_ player: Player, logger: Logger) {
        if !player.raiseWindow() { player.whenAnswered { logger.info("asked to raise: no window") } }
    }

    static func rootVideoProperties(_ player: Player) -> [InterfaceDescription.Property] {
        [
            .typed("Fullscreen", get: { player.video.isFullscreen }, set: { (on: Bool) in
                // announced when the window says it changed
                if !player.setFullscreen(on), on {
                    throw DBusError.notSupported("there is no window to make fullscreen (CanSetFullscreen is false)")
                }
            }),
            .typed("CanSetFullscreen", get: { player.video.hasWindow }),
            .typed("CanRaise", get: { player.video.hasWindow }),
        ]
    }

    static func extensionVideoProperties(_ player: Player) -> [InterfaceDescription.Property] {
        [
            .typed("HasVideo", get: { player.video.hasVideo }),
            .typed("VideoSize", get: {
                let size = player.video.size
                return SizeValue(Int32(clamping: size.width), Int32(clamping: size.height))
            }),
            .typed("ControlsVisible", get: { player.video.controlsVisible }, set: { (on: Bool) in player.setControlsVisible(on) }),
        ] + videoSettingsProperties(player)
    }

    /// Which of the root interface's properties each player event may change: only the window's.
    static let rootChanges = ChangeRules(MPRIS.root, [
        .videoChanged: .only(["Fullscreen", "CanSetFullscreen", "CanRaise"]),
    ])
}
