#!/usr/bin/env python3
"""Two clients' CPU profiles from the same run of `MoyaBench --only cpu`.

The benchmark's clients take turns in blocks of requests, so a profile of the whole run mixes
them. With `BLOCK_LOG=1` the benchmark logs each block (`block <client> <start> <end>`, monotonic
nanoseconds) on standard error, and `perf record -k CLOCK_MONOTONIC` stamps samples with the
same clock: each sample then belongs to the client whose block was running.

    BLOCK_LOG=1 perf record -k CLOCK_MONOTONIC -e cpu-clock -F 2000 -g -o run.data \\
        .build/release/MoyaBench --only cpu --rounds 8 --concurrency 50 \\
        --clients retry-unprotected,retry-protected 2> blocks.txt
    Comparisons/perf-by-client.py run.data blocks.txt retry-unprotected retry-protected [REGEX] [N]

Prints the samples per block of each client, then the functions whose samples per block differ
most between client A and client B, inclusive (any frame) and self (the leaf), optionally only
those matching REGEX. Only the benchmark's own process counts (the one with the most samples;
the server runs in a child process), or the process `PID` names.
"""
import bisect
import collections
import os
import re
import subprocess
import sys


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    data, blocks, a, b = sys.argv[1:5]
    pattern = re.compile(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[5] else None
    limit = int(sys.argv[6]) if len(sys.argv) > 6 else 40

    intervals = []
    for line in open(blocks):
        fields = line.split()
        if len(fields) == 4 and fields[0] == "block":
            intervals.append((int(fields[2]), int(fields[3]), fields[1]))
    intervals.sort()
    starts = [start for start, _, _ in intervals]
    block_count = collections.Counter(client for _, _, client in intervals)
    for client in (a, b):
        if block_count[client] == 0:
            sys.exit(f"no block of {client} in {blocks}")

    script = subprocess.run(["perf", "script", "-i", data, "-F", "pid,time,ip,sym"], capture_output=True, text=True).stdout
    samples = [sample.strip().splitlines() for sample in script.split("\n\n") if sample.strip()]
    pid = os.environ.get("PID") or collections.Counter(s[0].split()[0] for s in samples).most_common(1)[0][0]

    inclusive = collections.defaultdict(collections.Counter)
    leaf = collections.defaultdict(collections.Counter)
    totals = collections.Counter()
    for sample in samples:
        header = sample[0].split()
        if header[0] != pid or len(sample) < 2:
            continue
        time = int(round(float(header[1].rstrip(":")) * 1e9))
        index = bisect.bisect_right(starts, time) - 1
        if index < 0 or time > intervals[index][1]:
            continue
        client = intervals[index][2]
        totals[client] += 1
        frames = [re.sub(r"\+0x[0-9a-f]+$", "", (line.split(None, 1) + [""])[1] or line)[:150] for line in sample[1:]]
        leaf[client][frames[0]] += 1
        for frame in set(frames):
            inclusive[client][frame] += 1

    print(f"process {pid}; samples per block: " + ", ".join(f"{c} {totals[c] / block_count[c]:.1f}" for c in sorted(totals)))
    for title, counts in (("inclusive", inclusive), ("self", leaf)):
        print(f"== {title}, per block: {b} - {a}, {a}, {b}")
        names = [n for n in set(counts[a]) | set(counts[b]) if pattern is None or pattern.search(n)]
        difference = {n: counts[b][n] / block_count[b] - counts[a][n] / block_count[a] for n in names}
        for name in sorted(names, key=lambda n: -abs(difference[n]))[:limit]:
            print(f"{difference[name]:+8.2f} {counts[a][name] / block_count[a]:8.2f} {counts[b][name] / block_count[b]:8.2f} {name}")


main()
