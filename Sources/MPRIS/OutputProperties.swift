import DBus
import PlayerModel

/// The outputs on io.github.tonearm.Player1 (docs/sound.md, "Outputs"): the devices the engine lists,
/// following hot-plug, and the chosen one by id, announced by `.outputsChanged`. An id that is
/// neither `default` nor listed is refused with InvalidArgs before the player sees it.
extension MPRISService {
    /// One device: id, description, kind.
    typealias OutputValue = DBusTriple<String, String, String>

    static func outputProperties(_ player: Player) -> [InterfaceDescription.Property] {
        [
            .typed("Outputs", get: { player.outputs.devices.map { OutputValue($0.id, $0.description, $0.kind) } }),
            .typed("Output", get: { player.outputs.chosen }, set: { (id: String) in
                guard id.utf8.count <= Outputs.maximumIDLength, player.setOutput(id) else {
                    throw DBusError.invalidArgs("no output \(id.prefix(64).debugDescription): Output is \"default\" or an id Outputs lists")
                }
            }),
        ]
    }

    static let outputPropertyNames = ["Outputs", "Output"]
}
