#!/usr/bin/env python3
"""What Moya's own code costs in two builds, from CPU profiles of one client each.

Two builds cannot share a run, and this host's speed moves between runs, so samples per
request do not compare across builds. Shares of one run's samples do: each sample is given to
the innermost Moya (or MoyaBench) function on its stack when every frame below that function is
the Swift runtime or the C library (a retain, a lock, a copy the function made), and to nobody
otherwise (AsyncHTTPClient, NIO and the kernel doing the request's work). The total is Moya's own
share of the process's CPU; the rows are the functions whose share moved most.

    taskset -c 0 perf record -e cpu-clock -F 2000 -g -o old-1.data -- \\
        OLD/MoyaBench --only cpu --rounds 4 --clients callbacks --url http://127.0.0.1:8089/
    (the same for the new build, and a second run of each, taking turns)
    Comparisons/own-cost.py old-1.data,old-2.data new-1.data,new-2.data [N]

Only the process with the most samples counts (the benchmark's; its server is a child).
"""
import collections
import re
import subprocess
import sys

RUNTIME = re.compile(
    r"^(swift|_swift|__swift|\$ss|\$sS|tryCast|findBridge|tuple_|pthread|__GI|malloc|_int_|cfree|free|"
    r"__mem|mem|__tls|clock_gettime|__vdso|\[unknown\])|swift::"
)
OWN = ("$s4Moya", "$s9MoyaBench")


def load(paths):
    own = collections.Counter()
    total = 0
    for path in paths.split(","):
        script = subprocess.run(["perf", "script", "-i", path, "-F", "pid,ip,sym"], capture_output=True, text=True).stdout
        samples = [sample.strip().splitlines() for sample in script.split("\n\n") if sample.strip()]
        pid = collections.Counter(sample[0].split()[0] for sample in samples).most_common(1)[0][0]
        for sample in samples:
            if sample[0].split()[0] != pid or len(sample) < 2:
                continue
            total += 1
            for line in sample[1:]:
                frame = re.sub(r"\+0x[0-9a-f]+$", "", (line.split(None, 1) + [""])[1])[:170]
                if frame.startswith(OWN):
                    own[frame] += 1
                    break
                if not RUNTIME.search(frame):
                    break
    return own, total


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    limit = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    (a, total_a), (b, total_b) = load(sys.argv[1]), load(sys.argv[2])
    share = lambda counts, total, name: counts[name] / total * 1000
    print(f"Moya's own share, per mille of the process's samples: {sum(a.values()) / total_a * 1000:.1f} -> {sum(b.values()) / total_b * 1000:.1f}")
    names = set(a) | set(b)
    moved = {name: share(b, total_b, name) - share(a, total_a, name) for name in names}
    for name in sorted(names, key=lambda name: -abs(moved[name]))[:limit]:
        print(f"{moved[name]:+7.2f} {share(a, total_a, name):7.2f} {share(b, total_b, name):7.2f} {name}")


main()
