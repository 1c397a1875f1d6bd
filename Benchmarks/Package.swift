// swift-tools-version:6.2
//
// Microbenchmarks of Moya's pure parts (URL building, encoding, mapping, stubbed requests), run with package-benchmark:
//
//     cd Benchmarks && swift package benchmark
//
// MoyaBench, the provider against raw AsyncHTTPClient and URLSession over loopback, and
// MoyaMemoryBenchmark, peak memory of large transfers (README.md in this folder):
//
//     cd Benchmarks && swift build -c release && .build/release/MoyaBench
//
// SSEBench, server-sent event parsing against another parser (Comparisons/sse-bench.sh), and
// WebSocketBench, WebSocket echo through the provider against hummingbird's WSClient and a raw
// NIOWebSocket client:
//
//     cd Benchmarks && swift build -c release && .build/release/WebSocketBench
//
// HummingbirdWebSocketServer is not a benchmark: it is the WebSocket server of another make that
// the root package's interoperability tests talk to (README.md in this folder says how CI runs it).
//
// A package of its own, so that the benchmarks' dependencies (package-benchmark with its tools,
// plugins and malloc interposer, swift-prometheus) never enter the dependency graph of the
// library's users: they depend on the root package, which does not know about this one.
import PackageDescription

let package = Package(
    name: "MoyaBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        // Named, because a path dependency is otherwise known by its folder name, which differs
        // between clones.
        .package(name: "Moya", path: ".."),
        // The malloc interposer gives the malloc counts; naming the trait explicitly also turns
        // off the package's default "RuntimeInterposer" trait, whose package is not needed here.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        // The same versions as the root's: MoyaBench compares the provider with raw
        // AsyncHTTPClient, and serves the requests with a small NIO server of its own.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // `MoyaBench --metrics` bootstraps a Prometheus backend.
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // HummingbirdWebSocketServer, a WebSocket server that this project did not write, and
        // WSClient, the WebSocket client WebSocketBench compares the provider with.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket", from: "1.6.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // The plugin finds benchmark targets by their folder: `MoyaBenchmarks/` in a folder named
        // `Benchmarks`, which this package's root is.
        .executableTarget(
            name: "MoyaBenchmarks",
            dependencies: [
                .product(name: "Moya", package: "Moya"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "MoyaBenchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark")
            ]
        ),
        // The loopback benchmarks live in `Sources/`: the plugin would take any executable
        // target in a folder right below `Benchmarks` for one of its own and run it.
        //
        // The HTTP server both benchmarks send their requests to, with just the routes they use.
        .target(
            name: "BenchServer",
            dependencies: [
                // For the certificate of its HTTPS mode, MockServer's (public, for tests).
                .product(name: "MoyaTesting", package: "Moya"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // The WebSocket echo server WebSocketBench's clients talk to, on NIO alone.
        .target(
            name: "WebSocketEchoServer",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
        // One client per process against nginx (Comparisons/process-bench.sh): the provider's
        // cost measured from outside, as a user's program pays it.
        .executableTarget(
            name: "ProcessBench",
            dependencies: [
                .product(name: "Moya", package: "Moya"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Peak memory of a program that links Moya against one that links only AsyncHTTPClient
        // (Comparisons/memory-bench.sh): two programs, so that each maps only its own libraries.
        // What both print about their memory, with the C library only.
        .target(name: "MemoryBenchSupport"),
        // AsyncHTTPClient and NIO, nothing of Moya.
        .executableTarget(
            name: "MemoryBenchAHC",
            dependencies: [
                "MemoryBenchSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // A default MoyaProvider through the async API.
        .executableTarget(
            name: "MemoryBenchMoya",
            dependencies: [
                "MemoryBenchSupport",
                .product(name: "Moya", package: "Moya"),
            ]
        ),
        .executableTarget(
            name: "MoyaBench",
            dependencies: [
                "BenchServer",
                .product(name: "Moya", package: "Moya"),
                .product(name: "MoyaTesting", package: "Moya"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        // The HTTP cache in PostgreSQL against the cache in memory and against no cache
        // (MOYA_POSTGRES_URL).
        .executableTarget(
            name: "CacheBench",
            dependencies: [
                .product(name: "Moya", package: "Moya"),
                .product(name: "MoyaPostgres", package: "Moya"),
                .product(name: "MoyaTesting", package: "Moya"),
            ]
        ),
        .executableTarget(
            name: "MoyaMemoryBenchmark",
            dependencies: [
                "BenchServer",
                .product(name: "Moya", package: "Moya"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // WebSocket echo of small and large messages, and the memory of a 1 GiB conversation: the
        // provider against hummingbird's WSClient and a raw NIOWebSocket client, all three against
        // BenchWebSocketServer in a child process.
        .executableTarget(
            name: "WebSocketBench",
            dependencies: [
                "WebSocketEchoServer",
                .product(name: "Moya", package: "Moya"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
        // A WebSocket server of another make than the Python one of `.ci/ws-server.py`, for the
        // root package's interoperability tests (CI starts it; it is here so that the root
        // package's users never fetch Hummingbird).
        .executableTarget(
            name: "HummingbirdWebSocketServer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSCompression", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
