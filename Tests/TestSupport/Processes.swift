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

    @discardableResult
    public static func run(_ arguments: [String], environment: [String: String]? = nil) throws -> String {
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
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let output = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw Failure(command: arguments, status: process.terminationStatus, output: output)
        }
        return output
    }
}
