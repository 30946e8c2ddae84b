import Foundation

/// Python's `http.server` on 127.0.0.1 serving a directory, on a port the OS picks.
public final class HTTPServer: @unchecked Sendable {
    public let port: Int
    private let process: Process

    public struct StartFailure: Error, CustomStringConvertible {
        public var output: String
        public var description: String { "http.server did not start: \(output)" }
    }

    public init(directory: URL) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", directory.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        // it prints "Serving HTTP on 127.0.0.1 port N (...)" once it listens
        var output = ""
        var found: Int?
        while found == nil {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            output += String(decoding: chunk, as: UTF8.self)
            if let range = output.range(of: #"port (\d+)"#, options: .regularExpression) {
                found = Int(output[range].dropFirst(5))
            }
        }
        guard let found else {
            process.terminate()
            throw StartFailure(output: output)
        }
        port = found
    }

    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    deinit {
        process.terminate()
        process.waitUntilExit()
    }
}
