#!/usr/bin/env bash
# Prints the slowest tests of a `swift test` log (Swift Testing's "passed after" and "failed
# after" lines), slowest first:
#
#     bash scripts/slowest-tests.sh <log> [count, default 10]
#
# The time is Swift Testing's own: from the test's start to its end, so it includes the time a
# test waited for a thread while others ran. awk reads the whole sorted list (rather than `head`
# closing the pipe early): with `pipefail`, a `sort` cut off by SIGPIPE would fail the script.
set -euo pipefail
log="$1"
count="${2:-10}"
grep -E '(✔|✘) Test .* (passed|failed) after [0-9.]+ seconds' "$log" \
    | grep -v 'Test run with' \
    | sed -E 's/^.*Test (.*) (passed|failed) after ([0-9.]+) seconds.*$/\3 \1/' \
    | sort -rn \
    | awk -v count="$count" 'NR <= count { printf "%8.2f s  ", $1; $1 = ""; sub(/^ /, ""); print }'
