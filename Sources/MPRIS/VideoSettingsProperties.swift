import DBus
import PlayerModel

/// The window's geometry on io.github.tonearm.Player1 (docs/video.md): `VideoGravity` and
/// `PictureInPicture`, the player's settings (`VideoSettings`), writable with or without a window;
/// announced by `.videoChanged` (the extension's change rules).
extension MPRISService {
    static func videoSettingsProperties(_ player: Player) -> [InterfaceDescription.Property] {
        [
            .typed("VideoGravity", get: { player.video.settings.gravity.rawValue }, set: { (value: String) in
                guard let gravity = VideoGravity(rawValue: value) else {
                    throw DBusError.invalidArgs("VideoGravity is fit, fill or stretch, not \(value.debugDescription)")
                }
                player.setVideoGravity(gravity)
            }),
            .typed("PictureInPicture", get: { player.video.settings.pictureInPicture }, set: { (on: Bool) in
                player.setPictureInPicture(on)
            }),
        ]
    }
}
