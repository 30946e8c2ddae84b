import CShims

/// glibc's allocator, through the calls Swift's Glibc module leaves out (<malloc.h>).
public enum Allocator {
    /// mallopt(3): at most `arenas` arenas (M_ARENA_MAX) and a fixed mmap threshold of
    /// `mmapThreshold` bytes (M_MMAP_THRESHOLD); 0 leaves one as it is. False when glibc refused one.
    public static func setLimits(arenas: Int32, mmapThreshold: Int32) -> Bool {
        tonearm_set_malloc_limits(arenas, mmapThreshold) != 0
    }

    /// mallopt(3): a fixed mmap threshold (M_MMAP_THRESHOLD) and trim threshold (M_TRIM_THRESHOLD),
    /// in bytes. False when glibc refused one (an mmap threshold above 32 MiB, HEAP_MAX_SIZE / 2).
    public static func setThresholds(mmap: Int32, trim: Int32) -> Bool {
        tonearm_set_malloc_thresholds(mmap, trim) != 0
    }

    /// malloc_trim(3): hands the free pages inside the heap back to the system.
    public static func trim() {
        tonearm_malloc_trim()
    }
}

/// The running process's own stack, as a sanitizer sees it.
public enum ProcessStack {
    /// Under AddressSanitizer only (a weak symbol: nothing without ASan's runtime): clears the
    /// marks on the current thread's stack, as the compiler does before a call that never returns
    /// (`__asan_handle_no_return`, compiler-rt asan_rtl.cpp).
    public static func forgetAbandonedFrames() {
        tonearm_forget_abandoned_stack_frames()
    }
}
