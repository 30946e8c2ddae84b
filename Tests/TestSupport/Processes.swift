import Foundation

/// Runs a program to its end and returns what it printed; a non-zero exit throws with its output.
/// A missing tool throws too: a test that needs it fails, it never skips.
public enum Processes {
    public struct Failure: Error, CustomStringConvertible {
        public var command: [String]
        public var status: Int32
        public var output: String
        public var description: String { "\(command.joined(separator: " ")) exited \(status): \(output)" }
    }

    /// A program still running after `timeout` seconds is killed and the call throws: a hung tool
    /// fails its test instead of hanging the run.
    @discardableResult
    public static func run(_ arguments: [String], environment: [String: String]? = nil,
                           timeout: TimeInterval = 120) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        watchdog.cancel()
        if process.terminationReason == .uncaughtSignal {
            throw Failure(command: arguments, status: -1, output: "killed after \(Int(timeout)) s: " + String(decoding: data, as: UTF8.self))
        }
        let output = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw Failure(command: arguments, status: process.terminationStatus, output: output)
        }
        return output
    }
}
