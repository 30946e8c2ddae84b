import ArgumentParser
import Foundation

// Not Tonearm.main(): argument-parser exits 64 (EX_USAGE) on a usage error, and ours is 2.
do {
    var command = try Tonearm.parseAsRoot()
    try command.run()
} catch {
    if Tonearm.exitCode(for: error) == .validationFailure {
        FileHandle.standardError.write(Data((Tonearm.fullMessage(for: error) + "\n").utf8))
        exit(ExitStatus.usage)
    }
    Tonearm.exit(withError: error)
}
