# The checks of the packaging tests (deb-test.sh, install-test.sh), sourced by them: `check` runs
# one and prints one line; `summary NAME` prints "NAME: N passed, N failed" and fails when one did.
passed=0
failed=0
check() {  # check DESCRIPTION COMMAND...: one line per check
    local what="$1"
    shift
    if output=$("$@" 2>&1); then
        passed=$((passed + 1))
        echo "ok      $what"
    else
        failed=$((failed + 1))
        echo "FAILED  $what"
        [ -n "$output" ] && echo "$output" | sed 's/^/        /'
    fi
}
summary() {
    echo "$1: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}
