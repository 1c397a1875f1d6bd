#!/usr/bin/env bash
# Runs ProcessBench: each client in a process of its own against nginx on loopback, the clients
# alternating, and prints each client's median CPU time per request, requests per second and
# peak RSS, and the median and range of its ratios to raw AsyncHTTPClient's in the same round.
# nginx comes from the Debian package (`apt-get install nginx-light`); the script starts and
# stops its own instance.
#
#     Benchmarks/Comparisons/process-bench.sh [runs] [requests] [concurrency]
#
# CLIENTS names the clients to run (default: ahc ahc-like-moya moya-callbacks moya-async); it
# must include `ahc`, the reference. A client may be written BINARY:CLIENT to run another build
# of ProcessBench, so that two builds take turns in the same series: with
# `CLIENTS="old/ProcessBench:ahc old/ProcessBench:moya-async new/ProcessBench:moya-async"`, both
# builds are compared with the old binary's raw AsyncHTTPClient.
set -euo pipefail
runs=${1:-5}
requests=${2:-20000}
concurrency=${3:-1}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
# nginx's worker runs as an unprivileged user: it must be able to read the page.
chmod 755 "$work"
# shellcheck source=nginx.sh
source "$(dirname "$0")/nginx.sh"
trap 'stop_nginx "$work"; rm -rf "$work"' EXIT

mkdir -p "$work/www" "$work/logs"
head -c 128 /dev/zero | tr '\0' 'a' > "$work/www/index.html"
start_nginx "$work" 8089

# Extra flags for `swift build` (a mirror configuration, say) come from SWIFT_BUILD_FLAGS.
(cd "$here" && swift build -c release --product ProcessBench ${SWIFT_BUILD_FLAGS:-} >/dev/null)
bench="$here/.build/release/ProcessBench"
clients=${CLIENTS:-ahc ahc-like-moya moya-callbacks moya-async}
# Whether an idle vCPU polls before it halts changes every figure at concurrency 1 (see
# "The host's idle policy decides concurrency 1" in Benchmarks/README.md): say so with the results.
halt_poll=/sys/module/haltpoll/parameters/guest_halt_poll_ns
if [ -r "$halt_poll" ]; then
    echo "guest halt polling (haltpoll.guest_halt_poll_ns): $(cat "$halt_poll") ns"
fi
for run in $(seq "$runs"); do
    for client in $clients; do
        binary=$bench
        name=$client
        if [[ $client == *:* ]]; then
            binary=${client%%:*}
            name=${client##*:}
        fi
        # Each line: the round, the client as CLIENTS names it, then ProcessBench's own line.
        echo "$run $client $(PROCESS_BENCH_URL=http://127.0.0.1:8089 "$binary" "$name" "$requests" "$concurrency")"
    done
done | tee "$work/results.txt"

python3 - "$work/results.txt" <<'PY'
import collections, statistics, sys

# rows[client][round] = (CPU µs per request, requests per second, peak RSS KiB)
rows = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    fields = line.split()
    run, client, bench = fields[0], fields[1], fields[2:]
    values = dict(zip(bench[1::2], bench[2::2]))
    rows[client][run] = (float(values["cpu_us_per_req"]), float(values["req/s"]), int(values["max_rss_kib"]))
reference = next(client for client in rows if client.split(":")[-1] == "ahc")
base = rows[reference]


def ratios(values, index):
    """The client's figure over the reference's in the same round, for every round."""
    return [value[index] / base[run][index] for run, value in values.items() if run in base]


def spread(numbers):
    return f"{statistics.median(numbers):.3f} [{min(numbers):.3f}-{max(numbers):.3f}]"


# Medians of each client's own runs, then the medians of its per-round ratios: when the
# machine's speed drifts during a series, both clients of a round move together, so the ratios
# are the figures to compare.
width = max(len(client) for client in rows)
print(f"\n{'client':{width}} {'CPU µs/req':>10} {'req/s':>7} {'RSS KiB':>8}   ratios to {reference} per round (median [range]): req/s, CPU, RSS")
for client, values in rows.items():
    cpu, rate, rss = (statistics.median(x[i] for x in values.values()) for i in range(3))
    print(
        f"{client:{width}} {cpu:10.1f} {rate:7.0f} {rss:8.0f}   "
        f"{spread(ratios(values, 1))}  {spread(ratios(values, 0))}  {spread(ratios(values, 2))}"
    )
PY
