#!/bin/bash
# Runs every test (XCTest; the package has no swift-testing tests) and ends with one plain
# summary line, "N passed, N failed", taken from XCTest's own count.
set -u
swift="${SWIFT:-swift}"
log=.build/test.log
mkdir -p .build
set -o pipefail
"$swift" test --skip-build --disable-swift-testing 2>&1 | tee "$log"
status=$?
summary=$(grep -E 'Executed [0-9]+ tests?, with [0-9]+ failures?' "$log" | tail -n 1)
if [[ $summary =~ Executed\ ([0-9]+)\ tests?,\ with\ ([0-9]+)\ failures? ]]; then
    echo "tests: $(( BASH_REMATCH[1] - BASH_REMATCH[2] )) passed, ${BASH_REMATCH[2]} failed"
else
    echo "no test summary: the test run did not finish"
    [ "$status" -eq 0 ] && status=1
fi
exit "$status"
