import DBus
import PlayerModel

/// The crossfade on io.github.tonearm.Player1 (docs/sound.md): part of the player's
/// `AudioSettings`, announced by `.audioChanged`. A bad value is refused with InvalidArgs before
/// the player sees it.
extension MPRISService {
    static func crossfadeProperties(_ player: Player) -> [InterfaceDescription.Property] {
        [
            .typed("Crossfade", get: { player.audio.crossfadeSeconds }, set: { (seconds: Double) in
                guard seconds.isFinite, AudioSettings.crossfadeRange.contains(seconds) else {
                    throw DBusError.invalidArgs("Crossfade is from 0 (off) to 12 seconds, not \(seconds)")
                }
                player.setCrossfade(seconds, albums: player.audio.crossfadeAlbums)
            }),
            .typed("CrossfadeAlbums", get: { player.audio.crossfadeAlbums }, set: { (albums: Bool) in
                player.setCrossfade(player.audio.crossfadeSeconds, albums: albums)
            }),
        ]
    }

    static let crossfadePropertyNames = ["Crossfade", "CrossfadeAlbums"]
}
