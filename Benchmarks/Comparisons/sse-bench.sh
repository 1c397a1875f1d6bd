#!/usr/bin/env bash
# SSEBench: ServerSentEventParser against the parser of mattt/EventSource 1.1.1 on the same bytes.
#
#     bash Benchmarks/Comparisons/sse-bench.sh [--megabytes 64] [--rounds 5] [--chunks 4096,16384]
#
# EventSource 1.1.1 does not build on Linux as a package (one call, URLSession.bytes(for:delegate:),
# is missing from FoundationNetworking), so this script assembles a small package of its own in
# .build/sse-bench: EventSource's sources as published at its 1.1.1 tag, unchanged, plus
# EventSourceLinuxShim.swift (that one call, failing at once); Moya's Sources/Moya/Streaming/Parsing files
# as a module named Moya (they need nothing but Foundation, so AsyncHTTPClient is not built); and
# SSEBench/. It builds that package in release mode and runs it with the arguments given.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="${SSE_BENCH_DIR:-$root/.build/sse-bench}"

mkdir -p "$work"
if [ ! -d "$work/eventsource-1.1.1" ]; then
    git clone --quiet --depth 1 --branch 1.1.1 https://github.com/mattt/EventSource "$work/eventsource-1.1.1.partial" 2>/dev/null
    mv "$work/eventsource-1.1.1.partial" "$work/eventsource-1.1.1"
fi
rm -rf "$work/Sources"
mkdir -p "$work/Sources/EventSource" "$work/Sources/Moya" "$work/Sources/SSEBench"
cp "$work/eventsource-1.1.1/Sources/EventSource/"*.swift "$work/Sources/EventSource/"
cp "$here/EventSourceLinuxShim.swift" "$work/Sources/EventSource/"
cp "$root/Sources/Moya/Streaming/Parsing/"*.swift "$work/Sources/Moya/"
cp "$here/SSEBench/"*.swift "$work/Sources/SSEBench/"
cat >"$work/Package.swift" <<'MANIFEST'
// swift-tools-version:6.0
// Written by Benchmarks/Comparisons/sse-bench.sh; not part of the repository.
import PackageDescription

let package = Package(
    name: "SSEBench",
    targets: [
        .target(name: "EventSource"),
        .target(name: "Moya"),
        .executableTarget(name: "SSEBench", dependencies: ["EventSource", "Moya"]),
    ]
)
MANIFEST
cd "$work"
if ! swift build -c release --product SSEBench >"$work/build.log" 2>&1; then
    cat "$work/build.log" >&2
    exit 1
fi
"$work/.build/release/SSEBench" "$@"
