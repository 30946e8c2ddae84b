/// The paths of an `ao`, held either as paths or as one prefix and a number per path
/// (`/io/github/tonearm/Track/17`). A numbered list writes each path's text only while it is
/// encoded, into one buffer: a track list of 10,000 ids then costs no string, allocation or
/// release per id (make bench: Get(Tracks) at 10,000 items spent most of its time making and
/// freeing 10,000 strings). Both forms compare and hash by their paths, so a list that was
/// decoded equals the numbered list that was sent.
public struct ObjectPathList: RandomAccessCollection, Hashable, Sendable {
    // one reference: DBusValue's payloads stay one word (see the note at the top of DBusValue.swift)
    private final class Storage: Sendable {
        // fields, not a stored `Kind`: that enum keeps its case tag in the spare bits of the
        // numbers array's pointer, which LeakSanitizer cannot read as a pointer, so the numbers
        // of every list held long (the announced Tracks) were reported as leaked at exit
        // (make test-asan; llvm/llvm-project#56751)
        private let paths: [ObjectPath]
        /// nil: `paths` holds the paths.
        private let prefix: ObjectPath?
        private let numbers: [UInt64]

        init(_ kind: Kind) {
            switch kind {
            case .paths(let paths): (self.paths, prefix, numbers) = (paths, nil, [])
            case .numbered(let prefix, let numbers): (paths, self.prefix, self.numbers) = ([], prefix, numbers)
            }
        }

        var kind: Kind { prefix.map { .numbered(prefix: $0, numbers: numbers) } ?? .paths(paths) }
    }

    private enum Kind {
        case paths([ObjectPath])
        case numbered(prefix: ObjectPath, numbers: [UInt64])
    }

    private let storage: Storage

    public init(_ paths: [ObjectPath]) { storage = Storage(.paths(paths)) }

    /// `prefix/n` for each number `n`: always valid paths (digits are valid element characters).
    public init(numbered numbers: [UInt64], under prefix: ObjectPath) {
        storage = Storage(.numbered(prefix: prefix, numbers: numbers))
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int {
        switch storage.kind {
        case .paths(let paths): paths.count
        case .numbered(_, let numbers): numbers.count
        }
    }

    public subscript(position: Int) -> ObjectPath {
        switch storage.kind {
        case .paths(let paths): paths[position]
        case .numbered(let prefix, let numbers): prefix.appending(number: numbers[position])
        }
    }

    public static func == (a: ObjectPathList, b: ObjectPathList) -> Bool {
        switch (a.storage.kind, b.storage.kind) {
        case (.paths(let x), .paths(let y)): x == y
        case (.numbered(let p, let x), .numbered(let q, let y)) where p == q: x == y
        default: a.elementsEqual(b)
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for path in self { hasher.combine(path) }
    }

    /// Calls `body` with each path as a NUL-terminated C string, valid only during that call.
    func forEachCString(_ body: (UnsafePointer<CChar>) -> Void) {
        switch storage.kind {
        case .paths(let paths):
            for path in paths { path.rawValue.withCString(body) }
        case .numbered(let prefix, let numbers):
            let base = Array(prefix.rawValue.utf8)
            let separator = base.count == 1 ? 0 : 1  // "/" is the only valid path of one byte
            // the prefix, "/", at most 20 digits (UInt64.max) and the NUL
            withUnsafeTemporaryAllocation(of: CChar.self, capacity: base.count + separator + 21) { buffer in
                var start = 0
                for byte in base {
                    buffer[start] = CChar(bitPattern: byte)
                    start += 1
                }
                if separator == 1 {
                    buffer[start] = CChar(UInt8(ascii: "/"))
                    start += 1
                }
                for number in numbers {
                    var end = start
                    var rest = number
                    repeat {
                        buffer[end] = CChar(UInt8(ascii: "0") + UInt8(rest % 10))
                        end += 1
                        rest /= 10
                    } while rest > 0
                    // the digits came least significant first
                    var low = start, high = end - 1
                    while low < high {
                        buffer.swapAt(low, high)
                        low += 1
                        high -= 1
                    }
                    buffer[end] = 0
                    body(UnsafePointer(buffer.baseAddress!))
                }
            }
        }
    }
}
