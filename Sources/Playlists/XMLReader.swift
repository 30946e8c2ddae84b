/// A small reader of well-formed XML, enough for XSPF playlists: elements, text, CDATA sections,
/// the five predefined entities and character references; the prolog, comments, processing
/// instructions and a DOCTYPE (its internal subset too) are skipped. No namespaces (a prefixed name
/// stays as written), no DTD: an entity a DOCTYPE declares is an error, and nothing external is
/// ever read. What follows the root element is not read, as FoundationXML's XMLParser did not read
/// it (it did this before, and it brings Foundation proper with it).
struct XMLReader {
    enum Event: Equatable {
        case start(String)
        case end(String)
        case text(String)
    }

    /// Why a document is not well-formed, and the line (from 1) where that was seen.
    struct Failure: Error, Equatable {
        var line: Int
        var message: String
    }

    private let bytes: [UInt8]
    private var index = 0
    /// The line of `index`, from 1.
    private(set) var line = 1
    private var open: [String] = []
    private var rootClosed = false
    private var pendingEnd: String?

    /// The elements opened and not closed yet, outermost first.
    var openElements: [String] { open }

    init(_ text: String) { bytes = Array(text.utf8) }

    /// The next event; nil at the end of the document (which may end with elements still open:
    /// see `openElements`).
    mutating func next() throws(Failure) -> Event? {
        if let name = pendingEnd {
            pendingEnd = nil
            return end(name)
        }
        while index < bytes.count && !rootClosed {
            if bytes[index] != UInt8(ascii: "<") {
                let text = try characterData()
                if open.isEmpty {
                    guard text.allSatisfy(\.isWhitespace) else { throw fail("text outside the root element") }
                    continue
                }
                return .text(text)
            }
            if starts(with: "<!--") {
                try skip(past: "-->", what: "comment")
            } else if starts(with: "<![CDATA[") {
                guard !open.isEmpty else { throw fail("CDATA outside the root element") }
                index += 9
                let start = index
                try skip(past: "]]>", what: "CDATA section")
                return .text(String(decoding: bytes[start..<index - 3], as: UTF8.self))
            } else if starts(with: "<?") {
                try skip(past: "?>", what: "processing instruction")
            } else if starts(with: "<!DOCTYPE") {
                guard open.isEmpty else { throw fail("DOCTYPE inside the document") }
                try skipDoctype()
            } else if starts(with: "</") {
                index += 2
                let name = try self.name()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ">") else { throw fail("end tag </\(name)> not closed by >") }
                index += 1
                guard let innermost = open.last else { throw fail("end tag </\(name)> with no element open") }
                guard innermost == name else { throw fail("end tag </\(name)> where </\(innermost)> was expected") }
                return end(name)
            } else {
                index += 1
                let name = try self.name()
                let empty = try skipAttributes(of: name)
                open.append(name)
                if empty { pendingEnd = name }
                return .start(name)
            }
        }
        return nil
    }

    private mutating func end(_ name: String) -> Event {
        open.removeLast()
        if open.isEmpty { rootClosed = true }
        return .end(name)
    }

    // MARK: Pieces

    private func fail(_ message: String) -> Failure { Failure(line: line, message: message) }

    private func starts(with text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        return text.withUTF8Buffer { bytes[index..<index + count].elementsEqual($0) }
    }

    private mutating func advance() {
        if bytes[index] == UInt8(ascii: "\n") { line += 1 }
        index += 1
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { advance() }
    }

    /// Moves past the next `end`; a document that ends first is not well-formed.
    private mutating func skip(past end: StaticString, what: String) throws(Failure) {
        let startLine = line
        while index < bytes.count {
            if starts(with: end) {
                index += end.utf8CodeUnitCount
                return
            }
            advance()
        }
        throw Failure(line: startLine, message: "\(what) not closed")
    }

    /// `<!DOCTYPE name ... [internal subset]>`: skipped, quoted strings and the subset included.
    private mutating func skipDoctype() throws(Failure) {
        let startLine = line
        var quote: UInt8?
        var depth = 0
        while index < bytes.count {
            let byte = bytes[index]
            advance()
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: "[") {
                depth += 1
            } else if byte == UInt8(ascii: "]") {
                depth -= 1
            } else if byte == UInt8(ascii: ">") && depth <= 0 {
                return
            }
        }
        throw Failure(line: startLine, message: "DOCTYPE not closed")
    }

    /// A name: up to white space, `/`, `>` or `=`.
    private mutating func name() throws(Failure) -> String {
        let start = index
        while index < bytes.count, ![0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: "/"), UInt8(ascii: ">"), UInt8(ascii: "="),
                                     UInt8(ascii: "<")].contains(bytes[index]) {
            index += 1
        }
        guard index > start else { throw fail("a tag without a name") }
        let name = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let first = name.unicodeScalars.first, first != "-", first != ".", !("0"..."9").contains(first) else {
            throw fail("\(name) is not an element name")
        }
        return name
    }

    /// The attributes of a start tag, checked and skipped up to its `>`; true for `/>`.
    private mutating func skipAttributes(of element: String) throws(Failure) -> Bool {
        while true {
            let hadSpace = index < bytes.count && [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index])
            skipWhitespace()
            guard index < bytes.count else { throw fail("start tag <\(element)> not closed") }
            if bytes[index] == UInt8(ascii: ">") {
                index += 1
                return false
            }
            if starts(with: "/>") {
                index += 2
                return true
            }
            guard hadSpace else { throw fail("attributes of <\(element)> not separated by white space") }
            let attribute = try name()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { throw fail("attribute \(attribute) of <\(element)> without a value") }
            index += 1
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
                throw fail("attribute \(attribute) of <\(element)> without quotes")
            }
            let quote = bytes[index]
            index += 1
            while index < bytes.count, bytes[index] != quote {
                guard bytes[index] != UInt8(ascii: "<") else { throw fail("< in attribute \(attribute) of <\(element)>") }
                if bytes[index] == UInt8(ascii: "&") { _ = try reference() } else { advance() }
            }
            guard index < bytes.count else { throw fail("attribute \(attribute) of <\(element)> not closed") }
            index += 1
        }
    }

    /// Text up to the next `<`, references replaced.
    private mutating func characterData() throws(Failure) -> String {
        var text: [UInt8] = []
        while index < bytes.count, bytes[index] != UInt8(ascii: "<") {
            if bytes[index] == UInt8(ascii: "&") {
                text.append(contentsOf: try reference().utf8)
            } else {
                text.append(bytes[index])
                advance()
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// `&name;` or `&#N;` / `&#xN;` at `index`: what it stands for.
    private mutating func reference() throws(Failure) -> String {
        guard let semicolon = bytes[index...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else { throw fail("& not followed by a reference") }
        let body = String(decoding: bytes[index + 1..<semicolon], as: UTF8.self)
        index = semicolon + 1
        switch body {
        case "amp": return "&"
        case "lt": return "<"
        case "gt": return ">"
        case "quot": return "\""
        case "apos": return "'"
        default:
            let number: UInt32?
            if body.hasPrefix("#x") {
                number = UInt32(body.dropFirst(2), radix: 16)
            } else if body.hasPrefix("#") {
                number = UInt32(body.dropFirst(), radix: 10)
            } else {
                throw fail("entity &\(body); is not declared")
            }
            guard let number, number != 0, let scalar = Unicode.Scalar(number) else { throw fail("&\(body); is not a character") }
            return String(Character(scalar))
        }
    }
}
