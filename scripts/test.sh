#!/bin/bash
# Runs every test (XCTest; the package has no swift-testing tests) and ends with one plain
# summary line, "N passed, N failed", taken from XCTest's own count.
#
# Environment (all optional; unset, this is `make test`):
#   SWIFT_SCRATCH   the build directory the tests were built in (swift's --scratch-path)
#   SWIFT_SANITIZE  thread or address: the sanitizer they were built with (swift's --sanitize).
#                   Sanitizer reports of every process that loads the runtime (the test bundles and
#                   the tonearmd the service tests start, which inherits the environment) are
#                   written to $SWIFT_SCRATCH/sanitizer-reports, emptied first; a run that leaves
#                   any report fails, and prints them.
#   TONEARM_TEST_BOUND  seconds a test may run before the watchdog ends it, names it and goes on
#                   with the rest (default 300; scaled under a sanitizer): scripts/test-runner.py
set -u
swift="${SWIFT:-swift}"
scratch="${SWIFT_SCRATCH:-}"
sanitize="${SWIFT_SANITIZE:-}"
log=.build/test.log
options=()
if [ -n "$scratch" ]; then
    options+=(--scratch-path "$scratch")
    log="$scratch/test.log"
fi
reports=""
if [ -n "$sanitize" ]; then
    options+=(--sanitize="$sanitize")
    reports="$(pwd)/${scratch:-.build}/sanitizer-reports"
    supp="$(pwd)/Tests/Sanitizers"
    rm -rf "$reports"
    mkdir -p "$reports"
    # a sanitized engine answers its commands several times slower: the watchdog's bound (5 s,
    # ARCHITECTURE.md "The engine's link") scales as the tests' waits do (ServiceHarness.slowdown)
    export TONEARM_ENGINE_TIMEOUT="${TONEARM_ENGINE_TIMEOUT:-60}"
    case "$sanitize" in
    thread)
        export TSAN_OPTIONS="log_path=$reports/tsan:suppressions=$supp/tsan.supp:history_size=4:second_deadlock_stack=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
        ;;
    address)
        # LeakSanitizer runs at tonearmd's exit (the service tests stop it with SIGTERM or Quit), which
        # uses all of Sources/DBus and Sources/GStreamer, with the slow unwinder: the fast one stops at
        # stripped GLib frames, leaving a GLib or GStreamer allocation without its caller. Not at the
        # test runner's exit, where XCTest's and Foundation's own objects (test names, the bundle
        # list) are reported. The service harness gives tonearmd TONEARMD_ASAN_OPTIONS as ASAN_OPTIONS.
        export TONEARMD_ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=1:fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
        export ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
        export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
        # Mesa's llvmpipe (glimagesink's OpenGL under Xvfb) compiles with LLVM, whose JIT registers
        # its unwind tables under libgcc's lock and mallocs there: the slow unwinder above then takes
        # that lock again and tonearmd deadlocks at its first video frame (gdb: _Unwind_Find_FDE in
        # both frames). softpipe draws the same OpenGL without a JIT.
        export GALLIUM_DRIVER=softpipe
        ;;
    *)
        echo "SWIFT_SANITIZE must be thread or address, not '$sanitize'" >&2
        exit 2
        ;;
    esac
fi
mkdir -p "$(dirname "$log")"
set -o pipefail
# through the watchdog: a test that does not end within its bound is ended and named, and the
# rest run (scripts/test-runner.py, TONEARM_TEST_BOUND)
python3 scripts/test-runner.py -- "$swift" test --skip-build --disable-swift-testing "${options[@]}" 2>&1 | tee "$log"
status=$?
summary=$(grep -E 'Executed [0-9]+ tests?, with [0-9]+ failures?' "$log" | tail -n 1)
if [[ $summary =~ Executed\ ([0-9]+)\ tests?,\ with\ ([0-9]+)\ failures? ]]; then
    echo "tests: $(( BASH_REMATCH[1] - BASH_REMATCH[2] )) passed, ${BASH_REMATCH[2]} failed"
else
    echo "no test summary: the test run did not finish"
    [ "$status" -eq 0 ] && status=1
fi
if [ -n "$reports" ]; then
    # A leak allocated by code of a module unloaded before exit (its allocating frame is an unknown
    # module) is that module's: all of tonearmd's own code stays loaded to the end. Mesa's DRI driver
    # is the one unloaded (when the X display closes), and its state is then unreachable. A
    # LeakSanitizer report left with nothing else is set aside, counted; any other report counts.
    unloaded=0
    for report in $(grep -l "ERROR: LeakSanitizer" "$reports"/* 2>/dev/null); do
        grep -q "ERROR: AddressSanitizer" "$report" && continue
        if awk '/^(Direct|Indirect) leak/ { entry = 1; first = "" }
                entry && /^ +#1 / { first = $0 }
                entry && /^$/ { if (first !~ /<unknown module>/) ours = 1; entry = 0 }
                END { if (entry && first !~ /<unknown module>/) ours = 1; exit ours ? 1 : 0 }' "$report"; then
            rm -f "$report"
            unloaded=$((unloaded + 1))
        fi
    done
    [ "$unloaded" -gt 0 ] && echo "sanitizer ($sanitize): $unloaded leak report(s) only of modules unloaded before exit (Mesa's driver), not counted"
    found=$(find "$reports" -type f | sort)
    if [ -n "$found" ]; then
        for report in $found; do
            echo "=== $sanitize sanitizer report: $report"
            cat "$report"
        done
        echo "sanitizer ($sanitize): $(echo "$found" | wc -l) report file(s) in $reports"
        [ "$status" -eq 0 ] && status=1
    else
        echo "sanitizer ($sanitize): no reports"
    fi
fi
exit "$status"
