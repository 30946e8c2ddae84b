import ArgumentParser
import Glibc

// Not Tonearm.main(): argument-parser exits 64 (EX_USAGE) on a usage error, and ours is 2.
do {
    var command = try Tonearm.parseAsRoot()
    try command.run()
} catch {
    if Tonearm.exitCode(for: error) == .validationFailure {
        writeAll(Tonearm.fullMessage(for: error) + "\n", to: STDERR_FILENO)
        exit(ExitStatus.usage)
    }
    Tonearm.exit(withError: error)
}
