// swift-tools-version:6.2
// A Hummingbird 2 service that calls an upstream API (httpbin) through a MoyaProvider, with
// logging, Prometheus metrics, W3C trace propagation and graceful shutdown. Copy this folder into
// a project of your own and replace `.package(name: "Moya", path: "../..")` with the Moya
// package's URL and version.
import PackageDescription

/// What every target of the service uses.
let serviceDependencies: [Target.Dependency] = [
    .product(name: "Moya", package: "Moya"),
    .product(name: "Hummingbird", package: "hummingbird"),
    .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
    .product(name: "Prometheus", package: "swift-prometheus"),
    .product(name: "Logging", package: "swift-log"),
    .product(name: "Tracing", package: "swift-distributed-tracing"),
]

let package = Package(
    name: "GatewayService",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Moya", path: "../.."),
        // Without its default traits: this service needs neither swift-configuration nor the
        // parts of Hummingbird that need all of Foundation.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/swift-otel/swift-w3c-trace-context", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // The service: its upstream API, routes and parts, so that the tests can start it too.
        .target(
            name: "GatewayKit",
            dependencies: serviceDependencies + [
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "W3CTraceContext", package: "swift-w3c-trace-context"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // The program: `swift run GatewayService <upstream URL> [port]`.
        .executableTarget(
            name: "GatewayService",
            dependencies: serviceDependencies + ["GatewayKit", .product(name: "Metrics", package: "swift-metrics")]
        ),
        // `swift test`: the service in process, against the httpbin at MOYA_HTTPBIN_URL.
        .testTarget(
            name: "GatewayServiceTests",
            dependencies: serviceDependencies + ["GatewayKit", .product(name: "W3CTraceContext", package: "swift-w3c-trace-context")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
