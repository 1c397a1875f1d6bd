#!/usr/bin/env bash
# Two builds of MoyaBench against each other, in many short runs taking turns:
#
#     Benchmarks/Comparisons/alternate-builds.sh NEW_BINARY OLD_BINARY [client] [pairs] [requests] [url]
#
# Each pair runs NEW then OLD, each for one round of `requests` GETs (default 15,000) of one
# client (default `callbacks`) with `--only cpu`, pinned to core 0, against `url` (default
# http://127.0.0.1:8089/, the nginx of nginx.sh, whose workers belong on another core). It
# prints each run's CPU per request, then the median and quartiles of the ratios NEW/OLD taken
# pair by pair (default 20 pairs).
#
# Why short runs: a host whose speed drifts by several percent over minutes (a shared VM) moves
# a long run of one build against a long run of the other; two runs a few seconds apart see the
# same host, and the median of many such pairs ignores the pairs a burst of noise hit.
set -euo pipefail
new="$1"
old="$2"
client="${3:-callbacks}"
pairs="${4:-20}"
requests="${5:-15000}"
url="${6:-http://127.0.0.1:8089/}"

# CPU per request (µs) of one run: the first number of the client's row.
cpu() {
    taskset -c 0 "$1" --only cpu --rounds 1 --requests "$requests" --clients "$client" --url "$url" 2>&1 |
        grep -A1 '^client' | tail -1 |
        awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+$/) { print $i; exit } }'
}

ratios=()
for pair in $(seq 1 "$pairs"); do
    a="$(cpu "$new")"
    b="$(cpu "$old")"
    echo "pair $pair: new $a µs, old $b µs"
    ratios+=("$a/$b")
done
printf '%s\n' "${ratios[@]}" | python3 -c '
import statistics, sys
r = sorted(eval(line) for line in sys.stdin if line.strip())
q = statistics.quantiles(r, n=4)
print(f"new/old over {len(r)} pairs: median {statistics.median(r):.3f}, quartiles {q[0]:.3f}-{q[2]:.3f}, range {r[0]:.3f}-{r[-1]:.3f}")
'
