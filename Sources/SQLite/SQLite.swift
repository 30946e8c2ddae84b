import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// An error SQLite returned: its primary result code and the connection's message
/// (`sqlite3_errmsg`). The one place a result code becomes a Swift error is `Database.check`.
public struct SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The extended result code (sqlite3_extended_result_codes is on).
    public var code: Int32
    public var message: String

    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// The primary result code: the low 8 bits of an extended one (sqlite.org/rescode.html).
    public var primary: Int32 { code & 0xff }
    /// The file is not a database, or its pages do not add up (SQLITE_CORRUPT, SQLITE_NOTADB).
    public var isCorrupt: Bool { primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB }
    /// Another connection holds the lock (SQLITE_BUSY, SQLITE_LOCKED).
    public var isBusy: Bool { primary == SQLITE_BUSY || primary == SQLITE_LOCKED }
    /// A constraint failed (SQLITE_CONSTRAINT: a unique key, a check).
    public var isConstraint: Bool { primary == SQLITE_CONSTRAINT }
    /// The connection cannot write (SQLITE_READONLY).
    public static func readOnly(_ message: String) -> SQLiteError { SQLiteError(code: SQLITE_READONLY, message: message) }
    public var description: String { "\(message) (SQLite code \(code))" }
}

/// One SQLite connection (`sqlite3*`), owned by this object and closed when it goes
/// (`sqlite3_close_v2`). Not thread-safe: one queue uses it (the store's).
public final class Database {
    private var handle: OpaquePointer?
    /// The statements `cached` prepared, by their SQL; finalized at `close`.
    private var statements: [String: OpaquePointer] = [:]
    public let path: String

    public struct OpenFlags: OptionSet, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        public static let readOnly = OpenFlags(rawValue: SQLITE_OPEN_READONLY)
        public static let readWrite = OpenFlags(rawValue: SQLITE_OPEN_READWRITE)
        public static let create = OpenFlags(rawValue: SQLITE_OPEN_CREATE)
        /// `path` is a `file:` URI with query parameters (sqlite.org/uri.html).
        public static let uri = OpenFlags(rawValue: SQLITE_OPEN_URI)
    }

    /// Opens (`sqlite3_open_v2`) the file at `path`, or a private in-memory database for ":memory:".
    public init(path: String, flags: OpenFlags = [.readWrite, .create]) throws(SQLiteError) {
        self.path = path
        var db: OpaquePointer?
        // NOMUTEX: one queue uses the connection, so SQLite's own mutex would only cost
        let status = sqlite3_open_v2(path, &db, flags.rawValue | SQLITE_OPEN_NOMUTEX, nil)
        handle = db
        if status != SQLITE_OK {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(db)
            handle = nil
            throw SQLiteError(code: status, message: message)
        }
        sqlite3_extended_result_codes(db, 1)
    }

    deinit { close() }

    /// Closes the connection (`sqlite3_close_v2`); later calls throw SQLITE_MISUSE.
    public func close() {
        guard let handle else { return }
        for statement in statements.values { sqlite3_finalize(statement) }
        statements = [:]
        sqlite3_close_v2(handle)
        self.handle = nil
    }

    /// Throws the connection's error for `status` unless it is one of `ok`.
    @discardableResult
    func check(_ status: Int32, ok: Set<Int32> = [SQLITE_OK]) throws(SQLiteError) -> Int32 {
        guard !ok.contains(status) else { return status }
        guard let handle else { throw SQLiteError(code: status, message: "the database is closed") }
        var message = String(cString: sqlite3_errmsg(handle))
        // "disk I/O error" says little; the system's own error says what to do (a full disk, a
        // read-only directory): sqlite3_system_errno
        let systemError = sqlite3_system_errno(handle)
        if systemError != 0, status & 0xff == SQLITE_IOERR || status & 0xff == SQLITE_CANTOPEN
            || status & 0xff == SQLITE_FULL || status & 0xff == SQLITE_READONLY {
            message += ": " + String(cString: strerror(systemError))
        }
        throw SQLiteError(code: status, message: message)
    }

    private func connection() throws(SQLiteError) -> OpaquePointer {
        guard let handle else { throw SQLiteError(code: SQLITE_MISUSE, message: "the database is closed") }
        return handle
    }

    /// Runs SQL with no results (`sqlite3_exec`); several statements may be separated by `;`.
    public func execute(_ sql: String) throws(SQLiteError) {
        try check(sqlite3_exec(try connection(), sql, nil, nil, nil))
    }

    /// A prepared statement (`sqlite3_prepare_v2`).
    public func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v2(try connection(), sql, -1, &statement, nil))
        return Statement(statement!, database: self)
    }

    /// The statement of `sql`, prepared once for the connection's life and kept (each
    /// `sqlite3_prepare_v2` parses and plans the SQL again: most of a one-row write's CPU). For
    /// the statements a connection runs again and again. Reset it after reading rows from it.
    public func cached(_ sql: String) throws(SQLiteError) -> Statement {
        if let kept = statements[sql] { return Statement(kept, database: self, finalizes: false) }
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v3(try connection(), sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil))
        statements[sql] = statement!
        return Statement(statement!, database: self, finalizes: false)
    }

    /// The first column of the first row of `sql`, as an integer (nil: no row, or NULL).
    public func integer(_ sql: String) throws(SQLiteError) -> Int64? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.isNull(0) ? nil : statement.int64(0)
    }

    /// The first column of the first row of `sql`, as text.
    public func text(_ sql: String) throws(SQLiteError) -> String? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.string(0)
    }

    /// Runs `body` in one transaction (BEGIN IMMEDIATE: the write lock is taken at once), committed
    /// when it returns and rolled back when it throws: a crash in between leaves the state before it
    /// (sqlite.org/atomiccommit.html).
    public func transaction<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try cached("BEGIN IMMEDIATE").run()
        do {
            let result = try body()
            try cached("COMMIT").run()
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Rows inserted, updated or deleted since the connection opened (`sqlite3_total_changes64`).
    public var totalChanges: Int64 { handle.map { sqlite3_total_changes64($0) } ?? 0 }

    /// PRAGMA user_version: the schema's version, 0 in a new file (sqlite.org/pragma.html#pragma_user_version).
    public var userVersion: Int64 {
        get throws(SQLiteError) { try integer("PRAGMA user_version") ?? 0 }
    }
}

/// A prepared statement (`sqlite3_stmt*`), finalized when it goes. Used on its database's queue.
public final class Statement {
    private let handle: OpaquePointer
    private let database: Database
    /// False for a statement the database keeps (`Database.cached`): it finalizes it at close.
    private let finalizes: Bool

    init(_ handle: OpaquePointer, database: Database, finalizes: Bool = true) {
        self.handle = handle
        self.database = database
        self.finalizes = finalizes
    }

    deinit { if finalizes { sqlite3_finalize(handle) } }

    /// Ends a run that stopped at a row (`sqlite3_reset`), so that a kept statement holds no read
    /// of the file between uses.
    public func reset() { sqlite3_reset(handle) }

    /// Binds parameters 1...n in order (`sqlite3_bind_*`; text is copied), after a reset.
    @discardableResult
    public func bind(_ values: SQLValue...) throws(SQLiteError) -> Statement {
        try bind(values)
        return self
    }

    private func bind(_ values: [SQLValue]) throws(SQLiteError) {
        try database.check(sqlite3_reset(handle))
        try database.check(sqlite3_clear_bindings(handle))
        for (index, value) in values.enumerated() {
            let position = Int32(index + 1)
            let status: Int32 = switch value {
            case .null: sqlite3_bind_null(handle, position)
            case .integer(let v): sqlite3_bind_int64(handle, position, v)
            case .real(let v): sqlite3_bind_double(handle, position, v)
            case .text(let v): sqlite3_bind_text(handle, position, v, -1, csqlite_transient())
            }
            try database.check(status)
        }
    }

    /// Steps once (`sqlite3_step`): true when a row is there to read, false when done.
    @discardableResult
    public func step() throws(SQLiteError) -> Bool {
        try database.check(sqlite3_step(handle), ok: [SQLITE_ROW, SQLITE_DONE]) == SQLITE_ROW
    }

    /// Binds and runs a statement that returns no rows.
    public func run(_ values: SQLValue...) throws(SQLiteError) {
        try bind(values)
        while try step() {}
    }

    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    public func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    public func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    /// The column as text; nil when NULL.
    public func string(_ column: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, column) else { return nil }
        return String(cString: text)
    }
}

/// A value bound to a statement's parameter.
public enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
}

extension SQLValue {
    public static func optional(_ value: Int64?) -> SQLValue { value.map { .integer($0) } ?? .null }
    public static func optional(_ value: String?) -> SQLValue { value.map { .text($0) } ?? .null }
}
