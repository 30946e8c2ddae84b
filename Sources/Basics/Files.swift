import CShims
import FoundationEssentials
import Glibc

// The file-system calls the other targets make, over paths given as the bytes the file system
// names (a name need not be UTF-8): the one file outside the wrapper targets' C that touches
// pointers for them (issue 27). Each call is one system call or a loop of them, with its errno.

/// What `stat(2)` says of a path: its kind and identity.
public struct FileStatus: Sendable, Hashable {
    public enum Kind: Sendable, Hashable { case directory, regular, other }
    public let kind: Kind
    /// `st_dev` and `st_ino`: the same pair is the same file (a link loop is found by it).
    public let device: UInt64
    public let inode: UInt64

    init(_ info: stat) {
        switch info.st_mode & S_IFMT {
        case S_IFDIR: kind = .directory
        case S_IFREG: kind = .regular
        default: kind = .other
        }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}

/// An entry of a directory as `readdir(3)` lists it: its name's bytes and what `d_type` says.
public struct DirectoryEntry: Sendable {
    public enum Kind: Sendable { case regular, directory, link, unknown, other }
    public let name: [UInt8]
    public let kind: Kind
}

public enum Files {
    /// `mkdir(2)` of `path` and of each missing folder above it, with `mode` (`mkdir -p`); true
    /// when `path` is a folder at the end.
    @discardableResult
    public static func makeDirectories(_ path: String, mode: mode_t = 0o700) -> Bool {
        var prefix = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + component
            if mkdir(prefix, mode) != 0 && errno != EEXIST { return false }
        }
        if case .success(let status) = Files.status(Array(path.utf8)), status.kind == .directory { return true }
        return false
    }

    /// `stat(2)` of `path` (links followed), or the errno it failed with.
    public static func status(_ path: [UInt8]) -> Result<FileStatus, SystemErrno> {
        var info = stat()
        let result = withCString(path) { stat($0, &info) }
        return result == 0 ? .success(FileStatus(info)) : .failure(SystemErrno(errno))
    }

    /// `access(2)`: whether `path` can be read by this process.
    public static func isReadable(_ path: [UInt8]) -> Bool {
        withCString(path) { access($0, R_OK) } == 0
    }

    /// `access(2)`: whether the directory at `path` can be listed (read and searched).
    public static func isListable(_ path: [UInt8]) -> Bool {
        withCString(path) { access($0, R_OK | X_OK) } == 0
    }

    /// The kind of file system `path` is on (statfs(2)'s f_type), or nil when it cannot be asked.
    public static func fileSystemType(_ path: [UInt8]) -> Int64? {
        var type: Int64 = 0
        return withCString(path) { tonearm_file_system_type($0, &type) } != 0 ? type : nil
    }

    /// The entries of the directory at `path` except `.` and `..`, in the order `readdir(3)` gives
    /// them, with `status(of:)` for an entry whose `d_type` says too little (fstatat(2) relative to
    /// the open directory: no path is resolved again); nil when it cannot be opened.
    public static func withDirectory<T>(_ path: [UInt8], _ body: (_ entries: [DirectoryEntry], _ status: (_ name: [UInt8]) -> FileStatus?) -> T) -> T? {
        guard let directory = withCString(path, { opendir($0) }) else { return nil }
        defer { closedir(directory) }
        let descriptor = dirfd(directory)
        var entries: [DirectoryEntry] = []
        // a dirent is as long as its name (d_reclen), not sizeof(struct dirent): the fields are
        // read in place, never by copying the struct, which reads past the last entry of
        // readdir's buffer (make test-asan: heap-buffer-overflow in opendir's allocation)
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        let typeOffset = MemoryLayout<dirent>.offset(of: \dirent.d_type)!
        while let entry = readdir(directory) {
            let raw = UnsafeRawPointer(entry)
            let cName = (raw + nameOffset).assumingMemoryBound(to: CChar.self)
            let name = Array(UnsafeRawBufferPointer(start: cName, count: strlen(cName)))
            if name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            let kind: DirectoryEntry.Kind
            switch Int32(raw.load(fromByteOffset: typeOffset, as: UInt8.self)) {
            case Int32(DT_REG): kind = .regular
            case Int32(DT_DIR): kind = .directory
            case Int32(DT_LNK): kind = .link
            case Int32(DT_UNKNOWN): kind = .unknown
            default: kind = .other
            }
            entries.append(DirectoryEntry(name: name, kind: kind))
        }
        return body(entries) { name in
            var info = stat()
            // without AT_SYMLINK_NOFOLLOW: a link counts as what it points to
            return withCString(name) { fstatat(descriptor, $0, &info, 0) } == 0 ? FileStatus(info) : nil
        }
    }

    /// At most `count` bytes from the start of the file at `path`; nil when it cannot be opened.
    public static func readHead(_ path: String, count: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, count - filled) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            filled += got
        }
        return Array(bytes.prefix(filled))
    }

    /// One `read(2)` of `fd` into `buffer` from its start: the bytes read, 0 at the end or when
    /// nothing waits on a non-blocking descriptor, -1 on an error.
    public static func read(_ fd: Int32, into buffer: inout [UInt8]) -> Int {
        buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
    }

    /// Writes all of `bytes` to `fd`, straight (no buffer to flush); gives up on an error other
    /// than EINTR (a closed pipe). False when it gave up.
    @discardableResult
    public static func writeAll(_ bytes: [UInt8], to fd: Int32) -> Bool {
        var rest = bytes[...]
        while !rest.isEmpty {
            let written = rest.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            rest = rest.dropFirst(written)
        }
        return true
    }

    /// Runs `body` with `bytes` as a NUL-terminated C string.
    static func withCString<T>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> T) -> T {
        (bytes + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) }
        }
    }
}

/// An errno value a system call failed with.
public struct SystemErrno: Error, Sendable, Hashable {
    public let rawValue: Int32
    public init(_ rawValue: Int32) { self.rawValue = rawValue }
    /// ENOENT or ENOTDIR: nothing is at the path.
    public var isNoSuchFile: Bool { rawValue == ENOENT || rawValue == ENOTDIR }
    public var isPermissionDenied: Bool { rawValue == EACCES || rawValue == EPERM }
    public var message: String { String(cString: strerror(rawValue)) }
}

/// Two independent FNV-1a 64-bit hashes and the length of some bytes: a content address (a cover
/// image's file name), not a security hash.
public enum ContentDigest {
    public static func of(_ data: Data) -> String {
        var a: UInt64 = 0xcbf2_9ce4_8422_2325, b: UInt64 = 0x8422_2325_cbf2_9ce4
        // over the bytes in place: Data's iterator cost more than the hashing (perf of tag reads)
        data.withUnsafeBytes { bytes in
            for byte in bytes {
                a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
                b = (b &* 0x0000_0100_0000_01b3) ^ UInt64(byte)
            }
        }
        return Digits.padded(a, width: 16, radix: 16) + Digits.padded(b, width: 16, radix: 16) + "-" + String(data.count, radix: 16)
    }
}

extension Files {
    /// The file's birth time, when the file system keeps one (ext4, btrfs, xfs, tmpfs from Linux
    /// 6.2...) and says so; nil otherwise (statx(2), through `tonearm_birth_time`).
    public static func birthTime(_ path: String) -> Date? {
        var seconds: Int64 = 0
        var nanoseconds: UInt32 = 0
        guard tonearm_birth_time(path, &seconds, &nanoseconds) != 0 else { return nil }
        return Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9)
    }
}
