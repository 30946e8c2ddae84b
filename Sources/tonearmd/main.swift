import Basics
import DBus
import Dispatch
import EngineLink
import Glibc
import Logging
import TonearmClient
import TonearmService

/// tonearmd: the player service. It reads its options (`TonearmdOptions`, which answers `--help`,
/// `--version` and usage errors itself) and wires them into the service, which runs until SIGTERM,
/// SIGINT or a client's Quit.
enum Tonearmd {
    // a nonisolated type: top-level code is @MainActor, and a closure made there traps when a
    // C library calls it on another thread (design brief, trap 1)
    static func run() -> Never {
        // read once: tonearmd sets no variable of its own, and each read builds a dictionary of all
        // of them (some 100,000 instructions; tonearmd read it 6 times before the service)
        let environment = Environment.variables()
        let options = TonearmdOptions.read(Array(CommandLine.arguments.dropFirst()), environment: environment)
        Memory.tuneAllocator(environment: environment)
        let level = options.logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "tonearmd")
        guard let address = Connection.sessionBusAddress else {
            logger.critical("no session bus: DBUS_SESSION_BUS_ADDRESS is not set (run inside a desktop session, or start one with dbus-run-session)")
            exit(1)
        }
        do {
            let name = TonearmClient.baseName + (options.instance.map { ".\($0)" } ?? "")
            if options.open, try TonearmClient.handOver(options.items, to: name, address: address, logger: logger) { exit(0) }
            let lifecycle = Lifecycle(queue: DispatchQueue(label: "tonearm.service"), logger: logger)
            lifecycle.watchSignals()
            let service = try TonearmService.start(options.configuration(busAddress: address), lifecycle: lifecycle, logger: logger)
            withExtendedLifetime(service) { lifecycle.run() }
        } catch {
            // as swift-argument-parser reported an error of run(): its text, status 1
            _ = Files.writeAll(Array("Error: \(error)\n".utf8), to: 2)
            exit(1)
        }
    }
}

Tonearmd.run()
