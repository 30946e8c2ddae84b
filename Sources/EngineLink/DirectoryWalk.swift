import Basics
import PlayerModel

/// The playable regular files under one folder, depth first, each directory's entries in natural
/// order (which puts the whole list in natural order of paths). Names are read as bytes
/// (`readdir`), so a name that is not UTF-8 is found and queued as the same bytes.
///
/// Hidden files and directories are skipped; symbolic links are followed, each directory read
/// once (device and inode), so a link loop ends; unreadable subdirectories are skipped; file
/// systems that hold the kernel's and devices' state, not media, are not entered. The walk stops
/// when its `WalkControl` is cancelled (checked before each directory is read) or past `limit`
/// files, so what it holds is bounded by what it may add.
struct DirectoryWalk {
    let extensions: Set<[UInt8]>
    let limit: Int
    let control: WalkControl
    let root: MediaURI
    /// /proc, /sys, /dev and /run (`systemPaths`) by device and inode: not entered by whatever
    /// path (a link, a bind mount) leads there.
    let systemDirectories: Set<FileStatus>

    private enum Kind { case file, directory(FileStatus) }
    private struct Entry {
        let name: [UInt8]
        let kind: Kind
    }

    /// One directory on the way down: its entries in order, and the next one to look at.
    private struct Level {
        let path: [UInt8]
        let device: UInt64
        let entries: [Entry]
        var next = 0
    }

    /// Walks the folder at `path` (absolute, its bytes), whose `stat` is `status`.
    func files(under path: [UInt8], status: FileStatus) throws(ResolveError) -> [MediaURI] {
        var found: [MediaURI] = []
        var visited: Set<FileStatus> = [status]
        if let reason = control.cancellation { throw .cancelled(reason) }
        guard let top = list(path) else {
            throw .item(ItemError(.permission, "permission denied: cannot list \(root.displayPath)"))
        }
        // a stack of levels, not recursion: a tree as deep as PATH_MAX allows is no thread's stack
        var levels = [Level(path: path, device: status.device, entries: top)]
        var told = ContinuousClock.now
        func tell() {
            guard control.cancellation == nil, let progress = control.progress else { return }
            told = .now
            progress(root, found.count)
        }
        while let level = levels.last {
            guard level.next < level.entries.count else {
                levels.removeLast()
                continue
            }
            levels[levels.count - 1].next += 1
            let entry = level.entries[level.next]
            let full = Self.join(level.path, entry.name)
            switch entry.kind {
            case .file:
                found.append(MediaURI(filePath: full))
                if found.count > limit { throw .tooManyFiles(root: root, limit: limit) }
                if found.count % WalkControl.progressStep == 0 { tell() }
            case .directory(let identity):
                guard visited.insert(identity).inserted else { continue }  // a loop, or seen already
                // only where a file system is mounted can another kind begin
                if identity.device != level.device, Self.pseudoFileSystem(at: full) != nil { continue }
                if systemDirectories.contains(identity) { continue }
                if let reason = control.cancellation { throw .cancelled(reason) }
                if control.progress != nil, told.duration(to: .now) >= WalkControl.progressInterval { tell() }
                guard let entries = list(full) else { continue }
                levels.append(Level(path: full, device: identity.device, entries: entries))
            }
        }
        return found
    }

    /// The entries of a directory worth looking at (playable files, directories), in natural
    /// order; nil when it cannot be read.
    private func list(_ path: [UInt8]) -> [Entry]? {
        Files.withDirectory(path) { all, status in
            var entries: [Entry] = []
            for entry in all {
                guard let first = entry.name.first, first != UInt8(ascii: ".") else { continue }  // hidden
                // d_type says what most entries are without a stat(2) per file (a folder of 100,000
                // files); a link, or a file system that does not fill it in, is stat'ed
                switch entry.kind {
                case .regular:
                    if isPlayable(entry.name) { entries.append(Entry(name: entry.name, kind: .file)) }
                case .directory, .link, .unknown:
                    // a link counts as what it points to; a broken one is skipped
                    guard let found = status(entry.name) else { continue }
                    switch found.kind {
                    case .directory: entries.append(Entry(name: entry.name, kind: .directory(found)))
                    case .regular where isPlayable(entry.name): entries.append(Entry(name: entry.name, kind: .file))
                    default: continue
                    }
                case .other:
                    continue
                }
            }
            return NaturalOrder.sorted(entries, by: { String(decoding: $0.name, as: UTF8.self) },
                                       tieBreak: { $0.name.lexicographicallyPrecedes($1.name) })
        }
    }

    /// Whether the name's extension (after its last dot, ASCII case ignored) is a playable one.
    private func isPlayable(_ name: [UInt8]) -> Bool {
        guard let dot = name.lastIndex(of: UInt8(ascii: ".")), dot > 0 else { return false }
        let suffix = name[(dot + 1)...].map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }
        return extensions.contains(suffix)
    }

    private static func join(_ directory: [UInt8], _ name: [UInt8]) -> [UInt8] {
        directory.last == UInt8(ascii: "/") ? directory + name : directory + [UInt8(ascii: "/")] + name
    }


    // MARK: What is not media

    /// Where the system keeps devices and its run-time state: devtmpfs and /run's tmpfs say
    /// "tmpfs" to statfs(2), as a user's /tmp does, so these are known by name.
    static let systemPaths = ["/proc", "/sys", "/dev", "/run"]

    /// `systemPaths` as they are on this machine now (a stat each).
    static func systemIdentities() -> Set<FileStatus> {
        Set(systemPaths.compactMap { path in
            guard case .success(let status) = Files.status(Array(path.utf8)) else { return nil }
            return status
        })
    }

    /// Kinds of file system that hold the kernel's state, not files (statfs(2) f_type, from
    /// include/uapi/linux/magic.h): reading them is slow, endless (/proc/kcore), or has effects.
    static let pseudoFileSystems: [Int: String] = [
        0x9fa0: "proc", 0x6265_6572: "sysfs", 0x1cd1: "devpts", 0x27e0eb: "cgroup", 0x6367_7270: "cgroup2",
        0x6462_6720: "debugfs", 0x7472_6163: "tracefs", 0x7365_6673: "securityfs", 0x6265_6570: "configfs",
        0xcafe_4a11: "bpf", 0x6165_676c: "pstore", 0xde5e_81e4: "efivarfs", 0x6573_5543: "fusectl",
        0x1980_0202: "mqueue", 0x9584_58f6: "hugetlbfs", 0x4249_4e4d: "binfmt_misc", 0xf97c_ff8c: "selinuxfs",
        0x6e73_6673: "nsfs", 0x4341_5d53: "smackfs",
    ]

    /// The name of the pseudo file system the directory at `path` is on, or nil for any other.
    static func pseudoFileSystem(at path: [UInt8]) -> String? {
        Files.fileSystemType(path).flatMap { pseudoFileSystems[Int($0)] }
    }
}

extension MediaCapabilities {
    /// The playable regular files under `directory` (see `DirectoryWalk`), at most `limit` of them.
    /// - Throws: `.item` (`.notFound`, `.permission`, `.unsupportedFormat` for /proc and its like)
    ///   when `directory` itself cannot be walked; `.tooManyFiles` past `limit`; `.cancelled`.
    public func playableFiles(under directory: MediaURI, limit: Int = .max,
                              control: WalkControl = WalkControl()) throws(ResolveError) -> [MediaURI] {
        guard var path = directory.pathBytes else {
            throw .item(ItemError(.notFound, "not a local directory: \(directory.displayPath)"))
        }
        while path.count > 1, path.last == UInt8(ascii: "/") { path.removeLast() }
        let name = directory.displayPath
        let status: FileStatus
        switch Files.status(path) {
        case .success(let found): status = found
        case .failure(let error) where error.isPermissionDenied: throw .item(ItemError(.permission, "permission denied: \(name)"))
        case .failure: throw .item(ItemError(.notFound, "no such directory: \(name)"))
        }
        guard status.kind == .directory else { throw .item(ItemError(.notFound, "not a directory: \(name)")) }
        let system = DirectoryWalk.systemIdentities()
        if system.contains(status) {
            throw .item(ItemError(.unsupportedFormat, "not walked: \(name) holds the system's devices and state, not media"))
        }
        if let kind = DirectoryWalk.pseudoFileSystem(at: path) {
            throw .item(ItemError(.unsupportedFormat, "not walked: \(name) is a \(kind) file system, not media"))
        }
        guard Files.isListable(path) else {
            throw .item(ItemError(.permission, "permission denied: cannot list \(name)"))
        }
        let walk = DirectoryWalk(extensions: Set(playableExtensions.map { Array($0.utf8) }), limit: limit, control: control,
                                 root: directory, systemDirectories: system)
        return try walk.files(under: path, status: status)
    }
}
