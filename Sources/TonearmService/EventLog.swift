import EngineLink
import Logging
import PlayerModel

/// What the log says of the player's events: a line per track change, time-control change,
/// failure and end; nothing else.
enum EventLog {
    static func line(for event: PlayerModel.PlayerEvent, logger: Logger, player: Player) {
        switch event {
        case .currentItemChanged(let item?):
            logger.info("now: \(item.displayTitle)", metadata: ["uri": "\(item.uri)"])
        case .timeControlStatusChanged(let status):
            logger.info("time control: \(status.name)\(status.waitingReason.map { " (\($0.rawValue))" } ?? "")")
        case .itemFailed(_, let error):
            logger.error("\(error.message)")
        case .outputFailed(let error):
            logger.error("\(error.message): paused (Play tries the output again)")
        case .playedToEnd(let id):
            logger.info("played to end: \(player.item(id)?.displayTitle ?? "\(id)")")
        case .gapSkipped(let id, let at, let length):
            logger.warning("\(player.item(id)?.displayTitle ?? "\(id)"): \(length) of the stream at \(at) never came (not media?); playing on")
        case .queueChanged(.replaced), .queueChanged(.removed):
            // an emptied list (Clear) frees the items' memory at once, with no pipeline to
            // retire after it: give the pages back here too, off the serving queue
            if player.state.count == 0 { Memory.giveBackFreedMemorySoon() }
        default:
            break
        }
    }
}
