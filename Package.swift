// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "Moya",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Moya", targets: ["Moya"]),
        .library(name: "CombineMoya", targets: ["CombineMoya"]),
        // For test targets only: a mock server, cassettes and expectations (see the Testing article).
        .library(name: "MoyaTesting", targets: ["MoyaTesting"]),
        // An HTTP cache storage (and a cookie store) in PostgreSQL, which the processes of a
        // fleet share. Its own product: a package that does not use it never builds PostgresNIO.
        .library(name: "MoyaPostgres", targets: ["MoyaPostgres"]),
        // Empty modules unless their trait is enabled: see `traits` below. MoyaOpenAPI is a
        // ClientTransport for clients that swift-openapi-generator makes: their requests go
        // through a MoyaProvider.
        .library(name: "MoyaOpenAPI", targets: ["MoyaOpenAPI"]),
        .library(name: "RxMoya", targets: ["RxMoya"]),
        .library(name: "ReactiveMoya", targets: ["ReactiveMoya"]),
        // Not for users: compiles the Swift examples of the documentation. Examples/OpenAPIClient
        // applies it to compile the article whose examples use its generated client.
        .plugin(name: "DocExamples", targets: ["DocExamples"]),
    ],
    // MoyaOpenAPI, RxMoya and ReactiveMoya are opt-in: a package that enables none of these
    // traits never resolves, fetches or builds swift-openapi-runtime, RxSwift or ReactiveSwift.
    // Enable one from a dependent package with `.package(url: ..., from: ..., traits:
    // ["MoyaOpenAPI"])`, or here with `--traits MoyaOpenAPI`.
    traits: [
        .trait(
            name: "MoyaOpenAPI",
            description: "Builds the MoyaOpenAPI product: MoyaTransport, a ClientTransport for generated OpenAPI clients."
        ),
        .trait(name: "RxMoya", description: "Builds the RxMoya product: MoyaProvider.rx and its operators, on RxSwift 6."),
        .trait(name: "ReactiveMoya", description: "Builds the ReactiveMoya product: MoyaProvider.reactive and its operators, on ReactiveSwift 7."),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // Already in the graph through AsyncHTTPClient; MoyaTesting's mock server speaks HTTP/2.
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        // Already in the graph through AsyncHTTPClient; named to tell its no-op tracer apart.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        // A session is a Service of a ServiceGroup: it stops on a graceful shutdown.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Already in the graph through SwiftNIO; the session counts its requests in flight.
        .package(url: "https://github.com/apple/swift-atomics", from: "1.3.0"),
        // Request metrics go to whatever backend the program bootstraps.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // Only tests use it: the documentation's Prometheus example and an end-to-end test. No
        // product needs it, so SwiftPM leaves it out of a dependent package's resolution.
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Combine exists only on Apple platforms; elsewhere CombineMoya builds on OpenCombine.
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
        // Resolved only when the trait of the same name is enabled.
        .package(url: "https://github.com/ReactiveX/RxSwift", from: "6.10.0"),
        .package(url: "https://github.com/ReactiveCocoa/ReactiveSwift", from: "7.0.0"),
        // `swift package generate-documentation` builds the DocC catalogs; a plugin, so it is
        // never linked into the library.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // SHA-256 for the digests of downloads (and the test server's digests of uploads);
        // already in the graph through AsyncHTTPClient's swift-certificates, so it adds nothing
        // to a user's resolution.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"6.0.0"),
        // For MoyaPostgres only: the PostgreSQL client the fleet's shared cache is stored with.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // For MoyaOpenAPI only: the ClientTransport protocol and the HTTP types it speaks.
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .target(
            name: "Moya",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "NIOSOCKS", package: "swift-nio-extras"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                "CMoyaZlib",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Atomics", package: "swift-atomics"),
            ]
        ),
        // The system's zlib (zlib1g-dev on Debian, which Swift itself needs), for WebSocket
        // permessage-deflate: raw deflate with a chosen window, which AsyncHTTPClient's and
        // swift-nio-extras' compression do not offer.
        .target(
            name: "CMoyaZlib",
            linkerSettings: [.linkedLibrary("z")]
        ),
        .target(
            name: "CombineMoya",
            dependencies: [
                "Moya",
                .product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: [.linux])),
            ]
        ),
        .target(
            name: "RxMoya",
            dependencies: [
                "Moya",
                .product(name: "RxSwift", package: "RxSwift", condition: .when(traits: ["RxMoya"])),
            ],
            exclude: ["README.md"]
        ),
        .target(
            name: "ReactiveMoya",
            dependencies: [
                "Moya",
                .product(name: "ReactiveSwift", package: "ReactiveSwift", condition: .when(traits: ["ReactiveMoya"])),
            ],
            exclude: ["README.md"]
        ),
        // The test kit users add to their test targets; never linked into Moya.
        .target(
            name: "MoyaTesting",
            dependencies: [
                "Moya",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
        // MoyaTransport: Moya's public API only (no NIO, no AsyncHTTPClient).
        .target(
            name: "MoyaOpenAPI",
            dependencies: [
                "Moya",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: .when(traits: ["MoyaOpenAPI"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["MoyaOpenAPI"])),
            ]
        ),
        // The HTTP cache's storage in PostgreSQL: Moya's public API and PostgresNIO (NIO for the
        // connection that checks the server is reachable).
        .target(
            name: "MoyaPostgres",
            dependencies: [
                "Moya",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "MoyaTestServer",
            dependencies: [
                "Moya",
                "MoyaTesting",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .executableTarget(
            name: "MoyaDemo",
            dependencies: ["Moya", "MoyaTestServer"]
        ),
        // Turns the Swift blocks of the documentation into code for DocExamplesTests.
        .executableTarget(name: "DocExampleExtractor"),
        .plugin(name: "DocExamples", capability: .buildTool(), dependencies: ["DocExampleExtractor"]),
        // Fills an HTTP cache on disk until killed, for the test that kills it mid-write.
        .executableTarget(
            name: "MoyaCacheWriter",
            dependencies: ["Moya"]
        ),
        // One replica of a fleet sharing an HTTP cache in PostgreSQL, for the test of several
        // processes on one database.
        .executableTarget(
            name: "MoyaFleetReplica",
            dependencies: ["Moya", "MoyaPostgres"]
        ),
        // Downloads a file as another user, for the test of two users downloading at once.
        .executableTarget(
            name: "MoyaDownloader",
            dependencies: ["Moya"]
        ),
        // The PostgreSQL server of the tests: MOYA_POSTGRES_URL, or throwaway clusters started
        // from Debian's postgresql package. For MoyaPostgresTests and the cache suite of MoyaTests.
        .target(
            name: "MoyaPostgresTestSupport",
            dependencies: [
                "MoyaPostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/MoyaPostgresTestSupport"
        ),
        // Bounds how many tests a plain `swift test` runs at once (eight a core), before Swift
        // Testing reads its settings: see its source.
        .target(name: "MoyaTestHarness", path: "Tests/MoyaTestHarness"),
        .testTarget(
            name: "MoyaTests",
            dependencies: [
                "Moya",
                "MoyaTestHarness",
                "MoyaPostgres",
                "MoyaPostgresTestSupport",
                "MoyaTestServer",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Needs a PostgreSQL server: MOYA_POSTGRES_URL (started by .ci/run), or the binaries of
        // Debian's postgresql package to start throwaway clusters of its own.
        .testTarget(
            name: "MoyaPostgresTests",
            dependencies: [
                "Moya",
                "MoyaPostgres",
                "MoyaPostgresTestSupport",
                "MoyaTesting",
                "MoyaTestServer",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "CombineMoyaTests",
            dependencies: [
                "CombineMoya",
                "Moya",
                "MoyaTestServer",
                .product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: [.linux])),
            ]
        ),
        // Compiled (and not empty) only with the RxMoya trait: `swift test --traits RxMoya`.
        .testTarget(
            name: "RxMoyaTests",
            dependencies: [
                "RxMoya",
                "Moya",
                "MoyaTestServer",
                .product(name: "RxSwift", package: "RxSwift", condition: .when(traits: ["RxMoya"])),
            ]
        ),
        // Compiled (and not empty) only with the ReactiveMoya trait.
        .testTarget(
            name: "ReactiveMoyaTests",
            dependencies: [
                "ReactiveMoya",
                "Moya",
                "MoyaTestServer",
                .product(name: "ReactiveSwift", package: "ReactiveSwift", condition: .when(traits: ["ReactiveMoya"])),
            ]
        ),
        .testTarget(
            name: "MoyaTestingTests",
            dependencies: ["MoyaTesting", "Moya", "MoyaTestServer", .product(name: "NIOPosix", package: "swift-nio")]
        ),
        // A client written for Moya, compiled in the Swift 5 language mode: it must keep compiling.
        .testTarget(
            name: "Swift5ClientTests",
            dependencies: [
                "CombineMoya",
                "Moya",
                "MoyaTestServer",
                .product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // Every Swift example of README.md and the DocC articles, compiled.
        .testTarget(
            name: "DocExamplesTests",
            dependencies: [
                "CombineMoya",
                "Moya",
                "MoyaPostgres",
                "MoyaTesting",
                "RxMoya",
                "ReactiveMoya",
                .product(name: "RxSwift", package: "RxSwift", condition: .when(traits: ["RxMoya"])),
                .product(name: "ReactiveSwift", package: "ReactiveSwift", condition: .when(traits: ["ReactiveMoya"])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: [.linux])),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // Contexts/ holds code that examples assume; the plugin copies it into each document
            // that names it, so it is not compiled on its own.
            exclude: ["Contexts"],
            plugins: ["DocExamples"]
        ),
        // The same kind of client in the Swift 6 language mode.
        .testTarget(
            name: "Swift6ClientTests",
            dependencies: ["Moya", "MoyaTestServer"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
