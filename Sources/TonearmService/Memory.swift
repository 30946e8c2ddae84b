import Basics
import Dispatch
import FoundationEssentials

/// How tonearmd keeps its memory from growing over weeks: glibc's allocator settings at start, and
/// the heap's free pages handed back after a pipeline is torn down or the queue emptied (never on
/// a timer).
public enum Memory {
    /// glibc gives each thread that allocates an arena of its own and keeps what it freed; with
    /// GStreamer's streaming and teardown threads that is tens of MiB of RssAnon that a service
    /// running for weeks never gets back (make fuzz's memory check fails with the default;
    /// mallopt(3) M_ARENA_MAX). Two arenas keep the engine and the service apart. A fixed mmap
    /// threshold of 128 KiB: glibc otherwise raises it after a large block is freed (a client's
    /// 1 MiB string), and later large blocks come from a heap that is never given back (the same
    /// check, with fuzz.py --seed 3). glibc's own MALLOC_ARENA_MAX / MALLOC_MMAP_THRESHOLD_ in `environment` stand
    /// (mallopt(3)). Returns false when the C library refused a setting.
    @discardableResult
    public static func tuneAllocator(environment: [String: String] = Environment.variables()) -> Bool {
        Allocator.setLimits(arenas: environment["MALLOC_ARENA_MAX"] == nil ? 2 : 0,
                            mmapThreshold: environment["MALLOC_MMAP_THRESHOLD_"] == nil ? 128 * 1024 : 0)
    }

    /// Hands the free pages inside the heap back to the system (malloc_trim(3)): glibc gives back
    /// only the top of a heap by itself, and a pipeline's teardown frees megabytes below blocks
    /// still in use (make fuzz --only typed --seed 11 left the heap larger than at warm-up, all of
    /// it free). Runs on the caller's thread: a teardown thread, or
    /// `trimQueue`.
    @Sendable public static func giveBackFreedMemory() {
        Allocator.trim()
    }

    /// Where `giveBackFreedMemory` runs when not on a teardown thread. A serial queue of our own,
    /// never a global one: the first job on a global (non-overcommit) queue starts libdispatch's
    /// worker-pool monitor, a 1 s timer that then wakes the idle process forever
    /// (swift-corelibs-libdispatch src/event/workqueue.c, `_dispatch_workq_init_once`).
    public static let trimQueue = DispatchQueue(label: "tonearm.malloc-trim", qos: .utility)

    /// Hands the free pages back on `trimQueue`, off the caller's queue.
    public static func giveBackFreedMemorySoon() {
        trimQueue.async(execute: giveBackFreedMemory)
    }
}
