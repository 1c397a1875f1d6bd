#!/usr/bin/env bash
# The CPU goals of the resilience policies, for one or more builds of MoyaBench taking turns:
#
#     Benchmarks/Comparisons/policy-goals.sh [--runs N] [--callers 1|8|both] [--eight-against own|nginx] BINARY...
#
# Each run is `MoyaBench --only cpu --rounds 5` of three clients: a plain provider
# (`callbacks`), a provider with a `RetryPolicy` (`retry-unprotected`) and one with every policy
# on and a fixed limit (`retry-protected-fixed`). It prints, per run, every policy on / plain
# (goal ≤ 1.05), every policy on / `RetryPolicy` alone (goal ≤ 1.03) and `RetryPolicy` alone /
# plain, then each build's mean and range.
#
# - One caller: pinned to core 0, against nginx on 127.0.0.1:8089 (Comparisons/nginx.sh, its
#   worker on core 1), `GET /`.
# - Eight callers: `--concurrency 8`, not pinned, against the benchmark's own server in a child
#   process (`GET /bytes/128`), as the goals were first measured from outside; with
#   `--eight-against nginx`, against nginx's `/` instead (nginx's worker on core 1, as for one
#   caller), which reads the same on this host: Benchmarks/README.md, "Eight callers in three
#   setups".
#
# A single run moves by ±3 % on a shared 2-core host, more than the difference between two
# builds: take ten runs or more (default 10), and read the means.
set -euo pipefail
runs=10
callers=both
eight_against=own
while [[ $# -gt 0 ]]; do
    case "$1" in
        --runs) runs="$2"; shift 2 ;;
        --callers) callers="$2"; shift 2 ;;
        --eight-against) eight_against="$2"; shift 2 ;;
        *) break ;;
    esac
done
[[ $# -ge 1 ]] || { sed -n '2,21p' "$0"; exit 2; }
case "$callers" in 1 | 8 | both) ;; *) echo "--callers is 1, 8 or both" >&2; exit 2 ;; esac
case "$eight_against" in own | nginx) ;; *) echo "--eight-against is own or nginx" >&2; exit 2 ;; esac

clients=callbacks,retry-unprotected,retry-protected-fixed

# The three ratios of one run of `binary` with `callers` callers: "every/plain every/retry retry/plain".
ratios() {
    local binary=$1 callers=$2 output
    if [[ $callers == 1 ]]; then
        output=$(taskset -c 0 "$binary" --only cpu --rounds 5 --clients "$clients" --url http://127.0.0.1:8089/ 2>&1)
    else
        local target=()
        [[ $eight_against == nginx ]] && target=(--url http://127.0.0.1:8089/)
        output=$("$binary" --only cpu --rounds 5 --concurrency 8 --clients "$clients" "${target[@]}" 2>&1)
    fi
    # The two rows after the plain provider's, each ratio to it (the first number ending in x).
    echo "$output" | grep -E '^callbacks \+ RetryPolicy' |
        awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+x$/) { print $i + 0; break } }' |
        paste -sd' ' | awk 'NF == 2 { printf "%.3f %.3f %.3f\n", $2, $2 / $1, $1 }'
}

summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
counts=()
case "$callers" in 1) counts=(1) ;; 8) counts=(8) ;; both) counts=(1 8) ;; esac
for count in "${counts[@]}"; do
    echo "== $count caller(s): every policy on / plain, every policy on / RetryPolicy alone, RetryPolicy alone / plain"
    for run in $(seq 1 "$runs"); do
        for binary in "$@"; do
            line=$(ratios "$binary" "$count")
            [[ -n $line ]] || { echo "run $run $binary: no result (is nginx on 127.0.0.1:8089?)" >&2; exit 1; }
            echo "run $run $binary: $line"
            echo "$count $binary $line" >> "$summary"
        done
    done
done

python3 - "$summary" <<'PY'
import collections, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    count, binary, *values = line.split()
    rows[(count, binary)].append([float(v) for v in values])
names = ("every/plain (goal <= 1.05)", "every/retry (goal <= 1.03)", "retry/plain")
for (count, binary), runs in rows.items():
    print(f"{count} caller(s), {binary}, {len(runs)} runs:")
    for index, name in enumerate(names):
        values = [run[index] for run in runs]
        print(f"  {name}: mean {statistics.mean(values):.3f}, range {min(values):.3f}-{max(values):.3f}")
PY
