import Basics
import Foundation
import TestSupport
import XCTest

/// The engine's system-call filter (issue 39; docs/sandbox.md), on the live engine while it plays: its
/// /proc status, and calls made inside it as a debugger would (gdb attaches to it from here, which is
/// ptrace from outside: the filter leaves that alone), each answered by the filter and not the kernel.
/// gdb needs to be allowed to attach: the tests run as root (CAP_SYS_PTRACE), and Debian's kernels
/// leave Yama's ptrace_scope at 0 besides.
final class SandboxTests: ServiceTestCase {
    typealias H = ServiceHarness

    /// gdb stops every thread of the engine while it runs a call (1.5 s for the lot here): the
    /// watchdog's 5 s would be near on a busy machine.
    static let patientWatchdog = ["TONEARM_ENGINE_TIMEOUT": "60"]

    func testTheEngineRefusesWhatADebuggerInsideItWouldTryAndPlaysOn() throws {
        let tone = try short("tone", seconds: 30)
        let daemon = try harness.start(environment: Self.patientWatchdog)
        try harness.call(H.player, "OpenUri", "s", [H.uri(tone)])
        try harness.waitForStatus("Playing")
        let engine = try XCTUnwrap(ProcessTree.descendants(of: daemon.pid, named: "tonearm-engine").first, "an engine plays")
        // with no filter the probes below would do what they ask (as root: attach to tonearmd and stop it)
        let mode = try ProcessTree.status(of: engine, "Seccomp")
        guard mode == "2" else { throw TestError("the engine runs with Seccomp: \(mode ?? "none"), not 2 (a filter); log:\n\(daemon.output)") }
        XCTAssertEqual(try ProcessTree.status(of: engine, "Seccomp_filters"), "1")
        XCTAssertEqual(try ProcessTree.status(of: engine, "NoNewPrivs"), "1")
        XCTAssertEqual(try ProcessTree.status(of: daemon.pid, "Seccomp"), "0", "tonearmd itself is not filtered")

        let tonearmd = daemon.pid
        let code = try Self.firstMapping(of: tonearmd)
        let probes: [(String, [String], Debugger.Answer)] = [
            // what the filter is for: the engine reaching into tonearmd
            ("ptrace(PTRACE_ATTACH, tonearmd)", Syscall.ptraceAttach(tonearmd), .failed(EPERM)),
            ("process_vm_readv of tonearmd's code", Syscall.readMemory(of: tonearmd, at: code), .failed(EPERM)),
            // answers only the filter gives: without it the kernel says ESRCH, ESRCH, EINVAL and
            // EINVAL (a process with threads) (testWithTheSandboxOffTheSameCallsReachTheKernel)
            ("ptrace(PTRACE_ATTACH, no such process)", Syscall.ptraceAttach(Self.noSuchProcess), .failed(EPERM)),
            ("process_vm_readv of no such process", Syscall.readMemory(of: Self.noSuchProcess, at: code), .failed(EPERM)),
            ("clone3(NULL, 0)", Syscall.clone3WithNoArguments, .failed(ENOSYS)),
            ("unshare(CLONE_NEWUSER)", Syscall.unshareUserNamespace, .failed(EPERM)),
            // personality: the query is answered, a change of what execve gives is not
            ("personality(0xffffffff)", Syscall.personality(0xffff_ffff), .returned(0)),
            ("personality(ADDR_NO_RANDOMIZE)", Syscall.personality(0x0040000), .failed(EPERM)),
        ] + Syscall.x32Probes.map { ($0.0, $0.1, .failed(EPERM)) }
        let answers = try Debugger.probe(engine, probes.map { ($0.0, $0.1) })
        for ((what, _, expected), (_, answer)) in zip(probes, answers) {
            print("\(what): \(answer)")
            XCTAssertEqual(answer, expected, what)
        }

        // nothing happened to tonearmd, and the engine is the same and plays on
        XCTAssertEqual(try ProcessTree.status(of: tonearmd, "TracerPid"), "0", "tonearmd is traced by no one")
        XCTAssertEqual(ProcessTree.descendants(of: daemon.pid, named: "tonearm-engine"), [engine], "the same engine")
        try waitForThePositionToMove()
        XCTAssertEqual(try harness.playbackStatus, "Playing")
    }

    /// The same probes in an engine without the filter reach the kernel, which answers otherwise:
    /// the EPERM and ENOSYS above are the filter's. Only calls with no effect are made here (no
    /// process to attach to, no arguments to clone3, a user namespace a threaded process cannot
    /// have); not personality, which would change what the window program gets.
    func testWithTheSandboxOffTheSameCallsReachTheKernel() throws {
        let tone = try short("tone", seconds: 30)
        let daemon = try harness.start(environment: Self.patientWatchdog.merging(["TONEARM_SANDBOX": "off"]) { $1 })
        try harness.call(H.player, "OpenUri", "s", [H.uri(tone)])
        try harness.waitForStatus("Playing")
        let engine = try XCTUnwrap(ProcessTree.descendants(of: daemon.pid, named: "tonearm-engine").first, "an engine plays")
        XCTAssertEqual(try ProcessTree.status(of: engine, "Seccomp"), "0", "no filter")
        XCTAssertEqual(try ProcessTree.status(of: engine, "NoNewPrivs"), "1", "no-new-privileges stays")
        let warning = "TONEARM_SANDBOX=off: the engine runs without its system-call filter"
        XCTAssertEqual(daemon.output.components(separatedBy: warning).count - 1, 1, "said once, by tonearmd:\n\(daemon.output)")

        let code = try Self.firstMapping(of: daemon.pid)
        let answers = try Debugger.probe(engine, [
            ("ptrace(PTRACE_ATTACH, no such process)", Syscall.ptraceAttach(Self.noSuchProcess)),
            ("process_vm_readv of no such process", Syscall.readMemory(of: Self.noSuchProcess, at: code)),
            ("clone3(NULL, 0)", Syscall.clone3WithNoArguments),
            ("unshare(CLONE_NEWUSER)", Syscall.unshareUserNamespace),
        ])
        for (what, answer) in answers { print("\(what): \(answer)") }
        XCTAssertEqual(answers.map(\.1), [.failed(ESRCH), .failed(ESRCH), .failed(EINVAL), .failed(EINVAL)])
        try waitForThePositionToMove()
        XCTAssertEqual(try harness.playbackStatus, "Playing")
    }

    /// On a kernel that takes no seccomp filter (here: the engine started under a filter of the
    /// test's own that answers seccomp(2) with EINVAL, as a kernel without CONFIG_SECCOMP_FILTER
    /// does), the engine does not play unconfined: it says why and ends, and tonearmd, whose engine
    /// could not set up, stops with that reason (exit status 1). With TONEARM_SANDBOX=off it plays.
    func testAnEngineThatCannotInstallItsFilterDoesNotPlay() throws {
        // seccomp(2) is 317 on x86_64, 277 on arm64; EINVAL is 22
        #if arch(arm64)
        let seccomp = 277
        #else
        let seccomp = 317
        #endif
        let wrapper = try Self.engine(refusing: ["\(seccomp)=22"], in: harness.directory, named: "engine-without-seccomp")

        let log = harness.directory.appendingPathComponent("unfiltered.log")
        let failing = try Daemon.launch(on: harness.bus, cacheHome: harness.cacheHome, stateHome: harness.stateHome,
                                        musicDirectory: harness.musicDirectory, extraEnvironment: ["TONEARM_ENGINE": wrapper], log: log)
        defer { failing.stop() }
        // a fresh cache: the formats are not known, so tonearmd starts an engine at once
        XCTAssertEqual(failing.waitForExit(timeout: 60), 1, failing.output)
        XCTAssertTrue(failing.output.contains("GStreamer could not start: the engine cannot install its system-call filter: the kernel takes no seccomp filters"),
                      failing.output)

        let daemon = try harness.start(environment: ["TONEARM_ENGINE": wrapper, "TONEARM_SANDBOX": "off"])
        try harness.call(H.player, "OpenUri", "s", [H.uri(try short("tone", seconds: 30))])
        try harness.waitForStatus("Playing")
        let unfiltered = try XCTUnwrap(ProcessTree.descendants(of: daemon.pid, named: "tonearm-engine").first, "an engine plays")
        XCTAssertEqual(try ProcessTree.status(of: unfiltered, "Seccomp"), "2", "the test's own filter, not the engine's")
        try waitForThePositionToMove()
    }

    /// The Landlock rules (docs/sandbox.md, "Writes"): inside the playing engine, on its first
    /// thread and on its last (a thread GStreamer made for the item), gdb has it make a file in
    /// `$HOME`, append to and (from ABI 3) truncate an existing one there (a `.bashrc` of the test's HOME), and
    /// make a folder there: each is refused with EACCES and nothing changed; making a file beneath
    /// the cache folder and the temporary folder still works. The engine plays on.
    func testTheEngineWritesOnlyBeneathItsFolders() throws {
        // HOME and TMPDIR of the test's own: both are under /tmp, which would be the engine's
        // temporary folder otherwise
        let home = try Self.fakeHome(in: harness.directory), temporaryFolder = try Self.temporaryFolder(in: harness.directory)
        let daemon = try harness.start(environment: Self.patientWatchdog.merging(["HOME": home.path, "TMPDIR": temporaryFolder]) { $1 })
        try harness.call(H.player, "OpenUri", "s", [H.uri(try short("tone", seconds: 30))])
        try harness.waitForStatus("Playing")
        let engine = try XCTUnwrap(ProcessTree.descendants(of: daemon.pid, named: "tonearm-engine").first, "an engine plays")
        guard Self.landlockABI() > 0 else { throw TestError("this kernel has no Landlock: the rules cannot be tested") }

        let probe = home.appendingPathComponent("tonearm-probe").path, folder = home.appendingPathComponent("tonearm-folder").path
        let bashrc = home.appendingPathComponent(".bashrc").path
        let cached = harness.cacheHome.appendingPathComponent("tonearm-probe-\(engine)").path
        let temporary = temporaryFolder + "/tonearm-probe-\(engine)"
        defer { for path in [cached, temporary] { try? FileManager.default.removeItem(atPath: path) } }
        let last = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(engine)/task").count
        var refused: [(String, [String])] = []
        for thread in [1, last] {
            refused += [
                ("thread \(thread): create $HOME/tonearm-probe", ["thread \(thread)", Write.create(probe)]),
                ("thread \(thread): append to $HOME/.bashrc", [Write.append(bashrc)]),
                ("thread \(thread): mkdir $HOME/tonearm-folder", [Write.makeFolder(folder)]),
            ]
            // truncating is a right of its own from ABI 3 (Linux 6.2); Debian 12's 6.1 has ABI 2
            if Self.landlockABI() >= 3 { refused.append(("thread \(thread): truncate $HOME/.bashrc", [Write.truncate(bashrc)])) }
        }
        let allowed: [(String, [String])] = [
            ("create beneath the cache folder", ["thread \(last)", "set $cached = (int) open(\"\(cached)\", 0101, 0600)", "call $cached"]),
            ("create beneath the temporary folder", ["set $temporary = (int) open(\"\(temporary)\", 0101, 0600)", "call $temporary"]),
            ("close them", ["call (int) close($cached) + (int) close($temporary)"]),
        ]
        let answers = try Debugger.probe(engine, refused + allowed)
        for (what, answer) in answers { print("\(what): \(answer)") }
        for (what, answer) in answers.prefix(refused.count) { XCTAssertEqual(answer, .failed(EACCES), what) }
        for (what, answer) in answers.suffix(allowed.count) {
            guard case .returned(let value) = answer, value >= 0 else { XCTFail("\(what): \(answer)"); continue }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: probe), "no file made in $HOME")
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder), "no folder made in $HOME")
        XCTAssertEqual(try String(contentsOfFile: bashrc, encoding: .utf8), Self.bashrc, ".bashrc is as it was")
        XCTAssertTrue(FileManager.default.fileExists(atPath: cached))
        XCTAssertTrue(FileManager.default.fileExists(atPath: temporary))

        XCTAssertEqual(ProcessTree.descendants(of: daemon.pid, named: "tonearm-engine"), [engine], "the same engine")
        try waitForThePositionToMove()
        XCTAssertEqual(try harness.playbackStatus, "Playing")
    }

    /// With TONEARM_SANDBOX=off the same writes in $HOME are made: the EACCES above is the rules'.
    func testWithTheSandboxOffTheEngineWritesInHome() throws {
        let home = try Self.fakeHome(in: harness.directory), temporaryFolder = try Self.temporaryFolder(in: harness.directory)
        let daemon = try harness.start(environment: Self.patientWatchdog.merging(["HOME": home.path, "TMPDIR": temporaryFolder,
                                                                                  "TONEARM_SANDBOX": "off"]) { $1 })
        try harness.call(H.player, "OpenUri", "s", [H.uri(try short("tone", seconds: 30))])
        try harness.waitForStatus("Playing")
        let engine = try XCTUnwrap(ProcessTree.descendants(of: daemon.pid, named: "tonearm-engine").first, "an engine plays")
        let probe = home.appendingPathComponent("tonearm-probe").path
        let answers = try Debugger.probe(engine, [
            ("create $HOME/tonearm-probe", ["set $probe = (int) open(\"\(probe)\", 0101, 0600)", "call $probe"]),
            ("close it", ["call (int) close($probe)"]),
        ])
        for (what, answer) in answers { print("\(what): \(answer)") }
        guard case .returned(let fd) = answers[0].1, fd >= 0 else { return XCTFail("\(answers[0].0): \(answers[0].1)") }
        XCTAssertTrue(FileManager.default.fileExists(atPath: probe))
        try waitForThePositionToMove()
    }

    /// On a kernel without Landlock (here: landlock_create_ruleset answered with ENOSYS by a filter
    /// of the test's own, as such a kernel answers) the engine says so once and plays: the kernel
    /// decides. Rules the kernel refuses (landlock_restrict_self answered with EINVAL) end it
    /// before any media, and tonearmd, whose engine could not set up, stops with the reason.
    func testWithoutLandlockTheEnginePlaysAndWithRefusedRulesItDoesNot() throws {
        let noLandlock = try Self.engine(refusing: ["444=\(ENOSYS)"], in: harness.directory, named: "engine-without-landlock")
        let daemon = try harness.start(environment: ["TONEARM_ENGINE": noLandlock])
        try harness.call(H.player, "OpenUri", "s", [H.uri(try short("tone", seconds: 30))])
        try harness.waitForStatus("Playing")
        try waitForThePositionToMove()
        let notice = "Landlock is not available on this kernel: writes are not confined"
        XCTAssertEqual(daemon.output.components(separatedBy: notice).count - 1, 1, "said once, by the engine:\n\(daemon.output)")

        let refusing = try Self.engine(refusing: ["446=\(EINVAL)"], in: harness.directory, named: "engine-with-refused-rules")
        let log = harness.directory.appendingPathComponent("refused-rules.log")
        let failing = try Daemon.launch(on: harness.bus, cacheHome: harness.directory.appendingPathComponent("fresh-cache"),
                                        stateHome: harness.stateHome, musicDirectory: harness.musicDirectory,
                                        extraEnvironment: ["TONEARM_ENGINE": refusing], log: log)
        defer { failing.stop() }
        // a fresh cache: the formats are not known, so tonearmd starts an engine at once
        XCTAssertEqual(failing.waitForExit(timeout: 60), 1, failing.output)
        XCTAssertTrue(failing.output.contains("GStreamer could not start: the engine cannot apply its Landlock rules: Invalid argument"),
                      failing.output)
    }

    // MARK: Helpers

    static let bashrc = "# the test's own\n"

    /// A HOME of the test's own with a `.bashrc` in it.
    static func fakeHome(in directory: URL) throws -> URL {
        let home = directory.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        try bashrc.write(to: home.appendingPathComponent(".bashrc"), atomically: false, encoding: .utf8)
        return home
    }

    /// A program that runs the built engine under `with_refused_calls.py` with `refused` calls
    /// (`NUMBER=ERRNO`; Landlock's numbers are the same on x86_64 and arm64).
    static func engine(refusing refused: [String], in directory: URL, named name: String) throws -> String {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("PySupport/with_refused_calls.py")
        let wrapper = directory.appendingPathComponent(name)
        let engine = try BuiltProduct.executable("tonearm-engine")
        try "#!/bin/sh\nexec /usr/bin/python3 '\(script.path)' \(refused.joined(separator: " ")) -- '\(engine.path)' \"$@\"\n"
            .write(to: wrapper, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: wrapper.path)
        return wrapper.path
    }

    static func temporaryFolder(in directory: URL) throws -> String {
        let folder = directory.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.path
    }

    /// The kernel's Landlock ABI (landlock_create_ruleset's version query), 0 without Landlock.
    static func landlockABI() -> Int { Confinement.landlockABI() ?? 0 }

    /// Above the largest pid Linux gives (pid_max is at most 2^22).
    static let noSuchProcess: Int32 = 0x7fff_fff0

    /// The start of `pid`'s first mapping (its program's first page), from /proc/PID/maps.
    static func firstMapping(of pid: Int32) throws -> UInt64 {
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        guard let start = maps.split(separator: "-").first, let address = UInt64(start, radix: 16) else {
            throw TestError("cannot read /proc/\(pid)/maps")
        }
        return address
    }

    /// Waits until Position is half a second past where it is now (no event says the position
    /// moved: it is read again every 100 ms, at most 10 s).
    private func waitForThePositionToMove(file: StaticString = #filePath, line: UInt = #line) throws {
        let start = try harness.position
        let deadline = Date().addingTimeInterval(10 * ServiceHarness.slowdown)
        while try harness.position < start + 500_000 {
            guard Date() < deadline else {
                XCTFail("the position stayed at \(start) µs or near it", file: file, line: line)
                return
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }
}

/// System calls as gdb calls them in the engine, by number (`syscall(3)`), with this machine's
/// numbers.
enum Syscall {
    #if arch(x86_64)
    static let numbers = (ptrace: 101, processVMReadv: 310, clone3: 435, unshare: 272, personality: 135)
    /// x86_64's x32 ABI: getpid (39) with __X32_SYSCALL_BIT, which a kernel answers with a pid
    /// when x32 is on and ENOSYS when it is off.
    static let x32Probes = [("getpid through x32", ["call (long) syscall(\(0x4000_0000 | 39))"])]
    #elseif arch(arm64)
    static let numbers = (ptrace: 117, processVMReadv: 270, clone3: 435, unshare: 97, personality: 92)
    static let x32Probes: [(String, [String])] = []
    #endif

    /// PTRACE_ATTACH (16) to `pid`.
    static func ptraceAttach(_ pid: Int32) -> [String] {
        ["call (long) syscall(\(numbers.ptrace), 16, \(pid), 0, 0)"]
    }

    /// process_vm_readv of 8 bytes at `address` in `pid` into a buffer of the engine's: two iovecs
    /// (local, remote) and the buffer, in memory gdb has the engine allocate.
    static func readMemory(of pid: Int32, at address: UInt64) -> [String] {
        [
            "set $iov = (long *) malloc(64)",
            "set $iov[0] = (long) ($iov + 4)", "set $iov[1] = 8",
            "set $iov[2] = \(address)", "set $iov[3] = 8",
            "call (long) syscall(\(numbers.processVMReadv), \(pid), $iov, 1, $iov + 2, 1, 0)",
        ]
    }

    /// clone3 with no argument structure: the kernel says EINVAL (too small) before anything.
    static let clone3WithNoArguments = ["call (long) syscall(\(numbers.clone3), 0, 0)"]

    /// unshare(CLONE_NEWUSER): the kernel says EINVAL in a process with threads.
    static let unshareUserNamespace = ["call (long) syscall(\(numbers.unshare), \(0x1000_0000))"]

    static func personality(_ persona: UInt32) -> [String] {
        ["call (long) syscall(\(numbers.personality), \(persona))"]
    }
}

/// Writes as gdb makes them in the engine (flags in octal, as in fcntl.h: O_WRONLY 01, O_CREAT
/// 0100, O_APPEND 02000; the same on x86_64 and arm64).
enum Write {
    static func create(_ path: String) -> String { "call (int) open(\"\(path)\", 0101, 0600)" }
    static func append(_ path: String) -> String { "call (int) open(\"\(path)\", 02001)" }
    static func truncate(_ path: String) -> String { "call (int) truncate(\"\(path)\", 0)" }
    static func makeFolder(_ path: String) -> String { "call (int) mkdir(\"\(path)\", 0700)" }
}

/// gdb, attached to a live process for a few calls and detached (`gdb -p PID -batch`).
enum Debugger {
    enum Answer: Equatable, CustomStringConvertible {
        case returned(Int)
        case failed(Int32)

        var description: String {
            switch self {
            case .returned(let value): "returned \(value)"
            case .failed(let error): "-1, errno \(error) (\(String(cString: strerror(error))))"
            }
        }
    }

    /// Runs each probe's commands in `pid` (its last one a `call` of a system call), then reads
    /// the calling thread's errno: what each call returned, or the error it failed with.
    static func probe(_ pid: Int32, _ probes: [(String, [String])]) throws -> [(String, Answer)] {
        var commands: [String] = []
        for (_, lines) in probes {
            commands += lines
            // errno of the thread gdb called on; __errno_location has no debug type without libc's symbols
            commands.append("print *((int *(*)(void)) __errno_location)()")
        }
        // no debuginfod server is asked for symbols (before the attach, which reads them)
        let output = try Tool.run("gdb", ["-nx", "-batch", "-iex", "set debuginfod enabled off", "-p", "\(pid)"] + commands.flatMap { ["-ex", $0] },
                                  timeout: 120)
        // `call` and `print` each print one `$N = value`; `set` prints nothing
        let values = output.stdout.split(separator: "\n").compactMap { line -> Int? in
            guard line.hasPrefix("$"), let equals = line.range(of: " = ") else { return nil }
            return Int(line[equals.upperBound...])
        }
        guard values.count == probes.count * 2 else {
            throw TestError("""
                gdb did not make every call in \(pid) (status \(output.status)); it needs to attach: root, or \
                /proc/sys/kernel/yama/ptrace_scope 0. stdout:
                \(output.stdout)
                stderr:
                \(output.stderr.split(separator: "\n").filter { !$0.contains("DWO") }.suffix(20).joined(separator: "\n"))
                """)
        }
        return probes.enumerated().map { index, probe in
            let returned = values[2 * index], error = values[2 * index + 1]
            return (probe.0, returned == -1 ? .failed(Int32(error)) : .returned(returned))
        }
    }
}
