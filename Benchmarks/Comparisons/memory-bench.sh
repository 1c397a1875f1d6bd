#!/usr/bin/env bash
# Peak memory of a program that links Moya against one that links only AsyncHTTPClient: runs
# MemoryBenchAHC and MemoryBenchMoya, each a process of its own, in alternating rounds against
# nginx on loopback, for three workloads (20,000 GETs at concurrency 32; 200,000 GETs at
# concurrency 32, to see whether memory grows with the number of requests; one download of a
# 512 MiB file), and prints each program's median peak RSS and final RSS with their ranges, and
# the median and range of the Moya program's difference from the AsyncHTTPClient one in the same
# round, in MiB. A third program, the control, is the AsyncHTTPClient one with Foundation's
# networking library (and so Foundation, ICU, libcurl and libcurl's libraries) preloaded but not
# used: the Moya program's memory beyond the control's is what Moya adds beyond loading those
# libraries. nginx comes from the Debian package (`apt-get install nginx-light`); the script
# starts and stops its own instance, on MEMORY_BENCH_PORT (default 8089).
#
#     Benchmarks/Comparisons/memory-bench.sh [runs]            (default 3)
#     Benchmarks/Comparisons/memory-bench.sh --smaps           where the memory is, one run each
#
# With --smaps each program runs each workload once and saves /proc/self/smaps at its end; the
# script then prints the resident memory of each mapping (a library's code and data, the heap,
# anonymous memory) for each program, and the Moya program's differences from the other two.
#
# MOYA_BINARIES names the Moya programs to run, as `name:path` (default
# `moya:<build>/MemoryBenchMoya`), so that two builds take turns in one series: copy the binary
# of the first build aside, change the sources, and run
#     MOYA_BINARIES="before:/tmp/before/MemoryBenchMoya after:Benchmarks/.build/release/MemoryBenchMoya"
# AHC_BINARY is the AsyncHTTPClient program. MEMORY_BENCH_NO_BUILD=1 skips the build (when the
# binaries are built already); SWIFT_BUILD_FLAGS passes extra flags to `swift build`.
# WORKLOADS chooses the workloads (default "get20k get200k download").
set -euo pipefail
mode=rounds
if [ "${1:-}" = "--smaps" ]; then
    mode=smaps
    shift
fi
runs=${1:-3}
port=${MEMORY_BENCH_PORT:-8089}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
# nginx's worker runs as an unprivileged user: it must be able to read the files.
chmod 755 "$work"
# shellcheck source=nginx.sh
source "$(dirname "$0")/nginx.sh"
trap 'stop_nginx "$work"; rm -rf "$work"' EXIT

mkdir -p "$work/www" "$work/logs" "$work/downloads"
chmod 755 "$work/www"
head -c 128 /dev/zero | tr '\0' 'a' > "$work/www/index.html"
head -c 536870912 /dev/urandom > "$work/www/big.bin"
chmod 644 "$work/www/index.html" "$work/www/big.bin"
start_nginx "$work" "$port" "sendfile on;"

if [ "${MEMORY_BENCH_NO_BUILD:-}" != 1 ]; then
    for product in MemoryBenchAHC MemoryBenchMoya; do
        (cd "$here" && swift build -c release --product "$product" ${SWIFT_BUILD_FLAGS:-} >/dev/null)
    done
fi
ahc=${AHC_BINARY:-$here/.build/release/MemoryBenchAHC}
moyas=${MOYA_BINARIES:-moya:$here/.build/release/MemoryBenchMoya}
workloads=${WORKLOADS:-get20k get200k download}

# The command line of a workload.
arguments() {
    case $1 in
    get20k) echo "get 20000 32" ;;
    get200k) echo "get 200000 32" ;;
    download) echo "download /big.bin" ;;
    *) echo "unknown workload $1" >&2; exit 2 ;;
    esac
}

# The control: the AsyncHTTPClient program with Foundation's networking library (and through it
# Foundation, ICU and libcurl with its libraries) loaded as the Moya program loads them, but not
# used. The Moya program's memory beyond the control's is what Moya itself adds.
first_moya=${moyas%% *}
networking=$(ldd "${first_moya#*:}" | awk '/libFoundationNetworking/ { print $3 }')

# Runs one program: prints `<run> <workload> <name> <the program's line>`. Downloads go to the
# script's folder, which is removed at the end. The name `control` runs the AsyncHTTPClient
# program with the libraries above preloaded.
run_one() {
    local run=$1 workload=$2 name=$3 binary=$4 smaps=${5:-}
    local line preload=""
    [ "$name" = control ] && preload=$networking
    # shellcheck disable=SC2046
    line=$(TMPDIR="$work/downloads" MEMORY_BENCH_URL="http://127.0.0.1:$port" MEMORY_BENCH_SMAPS="$smaps" \
        LD_PRELOAD="$preload" "$binary" $(arguments "$workload"))
    echo "$run $workload $name $line"
}

if [ "$mode" = smaps ]; then
    for workload in $workloads; do
        run_one 1 "$workload" ahc "$ahc" "$work/smaps.$workload.ahc"
        run_one 1 "$workload" control "$ahc" "$work/smaps.$workload.control"
        for entry in $moyas; do
            run_one 1 "$workload" "${entry%%:*}" "${entry#*:}" "$work/smaps.$workload.${entry%%:*}"
        done
    done
    python3 - "$work" "$workloads" <<'PY'
import collections, glob, os, sys

work, workloads = sys.argv[1], sys.argv[2].split()


def mappings(path):
    """Resident KiB by mapping name: a file's name (its segments added up; the benchmark program
    itself as [program]), [heap], [stack], and anonymous mappings as [anon]."""
    totals = collections.Counter()
    name = None
    for line in open(path):
        fields = line.split()
        if not fields:
            continue
        if "-" in fields[0] and not fields[0].endswith(":"):
            name = os.path.basename(fields[5]) if len(fields) > 5 else "[anon]"
            if name.startswith("MemoryBench"):
                name = "[program]"
        elif fields[0] == "Rss:":
            totals[name] += int(fields[1])
    return totals


for workload in workloads:
    by_client = {path.rsplit(".", 1)[1]: mappings(path) for path in sorted(glob.glob(f"{work}/smaps.{workload}.*"))}
    ahc, control = by_client.pop("ahc"), by_client.pop("control")
    for client, moya in by_client.items():
        print(f"\n{workload}: resident KiB by mapping (largest differences from ahc first)")
        names = set(ahc) | set(control) | set(moya)
        rows = sorted(names, key=lambda name: (-abs(moya[name] - ahc[name]), name))
        print(f"{'mapping':40} {'ahc':>8} {'control':>8} {client:>8} {'-ahc':>8} {'-control':>8}")
        for name in rows:
            if ahc[name] or control[name] or moya[name]:
                print(f"{name[:40]:40} {ahc[name]:8} {control[name]:8} {moya[name]:8} {moya[name] - ahc[name]:+8} {moya[name] - control[name]:+8}")
        a, c, m = sum(ahc.values()), sum(control.values()), sum(moya.values())
        print(f"{'total':40} {a:8} {c:8} {m:8} {m - a:+8} {m - c:+8}")
PY
    exit 0
fi

for run in $(seq "$runs"); do
    for workload in $workloads; do
        run_one "$run" "$workload" ahc "$ahc"
        run_one "$run" "$workload" control "$ahc"
        for entry in $moyas; do
            run_one "$run" "$workload" "${entry%%:*}" "${entry#*:}"
        done
    done
done | tee "$work/results.txt"

python3 - "$work/results.txt" <<'PY'
import collections, statistics, sys

# figures[workload][program][run] = (peak RSS KiB, final RSS KiB)
figures = collections.defaultdict(lambda: collections.defaultdict(dict))
for line in open(sys.argv[1]):
    fields = line.split()
    run, workload, program = fields[:3]
    values = dict(zip(fields[3:], fields[4:]))
    figures[workload][program][run] = (int(values["max_rss_kib"]), int(values["vm_rss_kib"]))


def spread(kib, sign=""):
    """Median [lowest to highest] in MiB."""
    numbers = [value / 1024 for value in kib]
    return f"{statistics.median(numbers):{sign}.1f} [{min(numbers):{sign}.1f} to {max(numbers):{sign}.1f}]"


def differences(runs, base, index):
    """The program's figure minus `base`'s, round by round."""
    return [value[index] - base[run][index] for run, value in runs.items() if run in base]


print("\nMiB, median [range] of the runs. Peak is ru_maxrss; final is VmRSS at the end. The differences")
print("are a program's peak minus the AsyncHTTPClient program's (ahc) and the control's (AsyncHTTPClient")
print("with Foundation's networking library loaded) in the same round.")
print(f"{'workload':9} {'program':8} {'peak RSS':>22} {'final RSS':>22} {'peak - ahc':>24} {'peak - control':>24}")
for workload, programs in figures.items():
    ahc, control = programs["ahc"], programs.get("control", {})
    for program, runs in programs.items():
        line = f"{workload:9} {program:8} {spread(v[0] for v in runs.values()):>22} {spread(v[1] for v in runs.values()):>22}"
        if program != "ahc":
            line += f" {spread(differences(runs, ahc, 0), '+'):>24}"
        if program not in ("ahc", "control") and control:
            line += f" {spread(differences(runs, control, 0), '+'):>24}"
        print(line)

# Growth: each program's peak after 200,000 requests against its own after 20,000, in the same
# round.
if "get20k" in figures and "get200k" in figures:
    print("\ngrowth of peak RSS from 20,000 to 200,000 GETs, same program and round, MiB")
    for program, runs in figures["get200k"].items():
        growth = differences(runs, figures["get20k"].get(program, {}), 0)
        if growth:
            print(f"{program:8} {spread(growth, '+')}")
PY
