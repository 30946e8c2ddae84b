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

    /// While a video of `frame` size shows (nil: once its window is gone): the fixed 128 KiB mmap
    /// threshold makes every frame-sized block an mmap and munmap of its own, and Mesa's llvmpipe
    /// (glimagesink's renderer where there is no GPU) allocates and frees 2 to 8 MiB blocks for every
    /// 1080p frame on glimagesink's GL thread, whose pages then fault in zeroed again each time (perf
    /// on make bench's video: a quarter of tonearmd's samples in page faults and munmap, none in
    /// gst-launch-1.0's). So while it shows, the thresholds are what glibc's dynamic ones would
    /// become after freeing such a block (mallopt(3): the mmap threshold rises to the freed block's
    /// size, at most 32 MiB on 64 bits, and the trim threshold to twice that): an RGBA frame with
    /// llvmpipe's tile padding, and those blocks are reused in the heap. Once the window is gone they
    /// are 128 KiB again and the heap's free pages go back. Left alone when the environment chose the
    /// thresholds. Returns false when glibc refused a setting.
    @discardableResult
    public static func videoShows(_ frame: (width: Int, height: Int)?) -> Bool {
        guard !thresholdsFromEnvironment else { return true }
        let base = 128 * 1024
        guard let frame else {
            defer { Allocator.trim() }
            return Allocator.setThresholds(mmap: Int32(base), trim: Int32(base))
        }
        // llvmpipe pads to its 64-pixel tiles (gdb: a 1080p plane's block is 1920x1088); 16384: the largest GL texture
        let padded = (min(max(frame.width, 0), 16384) + 64) * (min(max(frame.height, 0), 16384) + 64) * 4
        let mmap = min(max(padded, base), 32 << 20)
        return Allocator.setThresholds(mmap: Int32(mmap), trim: Int32(2 * mmap))
    }

    private static let thresholdsFromEnvironment = ProcessInfo.processInfo.environment.keys.contains {
        $0 == "MALLOC_MMAP_THRESHOLD_" || $0 == "MALLOC_TRIM_THRESHOLD_"
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
