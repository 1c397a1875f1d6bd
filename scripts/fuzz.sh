#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of Fuzz/ (see Fuzz/README.md):
#
#     bash scripts/fuzz.sh build [target ...]          # all targets when none is named
#     bash scripts/fuzz.sh run <target> <seconds> [libFuzzer flag ...]
#     bash scripts/fuzz.sh repro <target> <input ...>    # runs the inputs once each
#     bash scripts/fuzz.sh minimize <target> <crash input> [runs, default 20000]
#     bash scripts/fuzz.sh ci [seconds per target, default 10]
#     bash scripts/fuzz.sh list
#
# Each target is compiled on its own, outside SwiftPM, from the few files of Sources/Moya it
# fuzzes, Fuzz/Shared and its Fuzz/<target>/main.swift, with `swiftc -sanitize=fuzzer,address`,
# into .build-fuzz/bin (MOYA_FUZZ_DIR moves .build-fuzz); a binary is compiled again only when
# one of those files, this script or the compiler changed. `run` copies the committed seeds of
# Fuzz/Corpus/<target> into the working corpus .build-fuzz/corpus/<target>, which keeps what
# the fuzzer finds from run to run without touching the repository, uses Fuzz/<target>.dict,
# writes the full log to .build-fuzz/logs and crashing inputs to .build-fuzz/artifacts/<target>,
# and prints the executions and the coverage of libFuzzer's last status line (`cov:` edges,
# `ft:` features). `ci` builds every target and runs each for a few seconds, as many at once as
# there are cores; it fails if a build fails or a fuzzer finds anything.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${MOYA_FUZZ_DIR:-$root/.build-fuzz}"
targets=(sse lines content-disposition key-path redirect-location set-cookie cache-control)
# Swift's backtracer, started by a failed property's trap, reads the stack in ways that
# AddressSanitizer reports as a stack-buffer-underflow: without it, libFuzzer reports the trap
# as the "deadly signal" it is.
export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}"

# The files of Sources/Moya each target is compiled from.
sources() {
    local moya="$root/Sources/Moya"
    case "$1" in
    sse | lines) echo "$moya"/Streaming/Parsing/*.swift ;;
    content-disposition) echo "$moya/Bodies/ContentDisposition.swift $moya/Bodies/DownloadFileName.swift" ;;
    key-path) echo "$moya/Mapping/JSONKeyPathScanner.swift $moya/Mapping/JSONKeyPath.swift" ;;
    redirect-location) echo "$moya/Model/URLOrigin.swift" ;;
    set-cookie) echo "$moya/Cookies/SetCookieParser.swift $moya/Cookies/CookieDate.swift $moya/Caching/CacheHTTPDate.swift $moya/Headers/CivilDate.swift" ;;
    cache-control) echo "$moya/Caching/CacheControl.swift $moya/Caching/CacheHTTPDate.swift $moya/Caching/CacheHeaderFields.swift $moya/Headers/CivilDate.swift" ;;
    *)
        echo "unknown target '$1'; the targets are: ${targets[*]}" >&2
        return 1
        ;;
    esac
}

build() {
    local target="$1" files key
    files="$(sources "$target")"
    mkdir -p "$out/bin" "$out/module-cache"
    # A binary is rebuilt when anything it is made from changes: its files, this script (which
    # holds the flags) or the compiler. Its key, a hash of all of them, is kept beside it.
    # shellcheck disable=SC2086  # $files is a list of paths without spaces.
    key="$({ swiftc --version 2>&1; cat "$root/scripts/fuzz.sh" $files "$root"/Fuzz/Shared/*.swift "$root/Fuzz/$target/main.swift"; } | sha256sum | cut -d' ' -f1)"
    if [ -x "$out/bin/$target" ] && [ "$(cat "$out/bin/$target.key" 2>/dev/null)" = "$key" ]; then
        echo "$target is up to date" >&2
        return 0
    fi
    rm -f "$out/bin/$target.key"
    echo "building $target" >&2
    # lld: the default gold linker warns about every AddressSanitizer helper it cannot export.
    # shellcheck disable=SC2086  # $files is a list of paths without spaces.
    swiftc -sanitize=fuzzer,address -parse-as-library -O -g -warnings-as-errors -use-ld=lld \
        -module-name "Fuzz_${target//-/_}" -module-cache-path "$out/module-cache" \
        $files "$root"/Fuzz/Shared/*.swift "$root/Fuzz/$target/main.swift" \
        -o "$out/bin/$target"
    echo "$key" >"$out/bin/$target.key"
}

# Runs one target for $2 seconds; prints a summary line; fails when the fuzzer found something.
run() {
    local target="$1" seconds="$2"
    shift 2
    sources "$target" >/dev/null
    local binary="$out/bin/$target"
    build "$target"
    local corpus="$out/corpus/$target" artifacts="$out/artifacts/$target"
    mkdir -p "$corpus" "$artifacts" "$out/logs"
    cp -n "$root/Fuzz/Corpus/$target/"* "$corpus/" 2>/dev/null || true
    local log
    log="$out/logs/$target-$(date -u +%Y%m%dT%H%M%SZ).log"
    local status=0
    "$binary" -dict="$root/Fuzz/$target.dict" -max_total_time="$seconds" -print_final_stats=1 \
        -artifact_prefix="$artifacts/" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
        "$@" "$corpus" >"$log" 2>&1 || status=$?
    local executions last
    executions="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
    last="$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)"
    printf '%-20s %6ss  executions: %-10s cov: %-6s ft: %-6s corpus: %s\n' "$target" "$seconds" "${executions:-?}" \
        "$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")" "$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")" \
        "$(sed -n 's/.* corp: \([^ ]*\).*/\1/p' <<<"$last")"
    if [ "$status" -ne 0 ]; then
        echo "$target FAILED (exit $status); log: $log" >&2
        grep -E 'property failed|ERROR: libFuzzer|ERROR: AddressSanitizer|Fatal error|Test unit written' "$log" >&2 || tail -20 "$log" >&2
        return 1
    fi
}

command="${1:-}"
shift || true
case "$command" in
build)
    if [ "$#" -eq 0 ]; then set -- "${targets[@]}"; fi
    for target in "$@"; do build "$target"; done
    ;;
run)
    [ "$#" -ge 2 ] || { echo "usage: $0 run <target> <seconds> [libFuzzer flag ...]" >&2; exit 2; }
    run "$@"
    ;;
repro)
    [ "$#" -ge 2 ] || { echo "usage: $0 repro <target> <input ...>" >&2; exit 2; }
    target="$1"
    shift
    build "$target"
    "$out/bin/$target" "$@"
    ;;
minimize)
    [ "$#" -ge 2 ] || { echo "usage: $0 minimize <target> <crash input> [runs]" >&2; exit 2; }
    build "$1"
    "$out/bin/$1" -minimize_crash=1 -runs="${3:-20000}" -exact_artifact_path="$2.min" "$2"
    echo "minimized input: $2.min" >&2
    ;;
ci)
    seconds="${1:-10}"
    start=$SECONDS
    for target in "${targets[@]}"; do build "$target"; done
    # Each fuzzer runs on one thread, so as many run at once as there are cores
    # (MOYA_FUZZ_JOBS); their summaries are printed in the order of the targets.
    jobs_at_once="${MOYA_FUZZ_JOBS:-$(nproc)}"
    mkdir -p "$out/ci"
    for target in "${targets[@]}"; do
        while [ "$(jobs -rp | wc -l)" -ge "$jobs_at_once" ]; do wait -n || true; done
        (
            status=0
            run "$target" "$seconds" >"$out/ci/$target.out" 2>&1 || status=$?
            echo "$status" >"$out/ci/$target.status"
        ) &
    done
    wait
    failed=0
    for target in "${targets[@]}"; do
        cat "$out/ci/$target.out"
        [ "$(cat "$out/ci/$target.status")" = 0 ] || failed=1
    done
    echo "fuzz ci: $((SECONDS - start)) s in all" >&2
    exit "$failed"
    ;;
list)
    printf '%s\n' "${targets[@]}"
    ;;
*)
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
