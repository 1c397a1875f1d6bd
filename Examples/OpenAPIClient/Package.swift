// swift-tools-version:6.2
// A client that swift-openapi-generator makes from openapi.yaml (httpbin's API), sent through
// Moya with MoyaOpenAPI's MoyaTransport. Copy this folder into a project of your own and replace
// `.package(name: "Moya", path: "../..")` with the Moya package's URL and version.
import PackageDescription

let package = Package(
    name: "OpenAPIClient",
    platforms: [.macOS(.v13)],
    dependencies: [
        // MoyaOpenAPI is built only with its trait.
        .package(name: "Moya", path: "../..", traits: ["MoyaOpenAPI"]),
        .package(url: "https://github.com/apple/swift-openapi-generator", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // Only the tests and the benchmark use them: the same client through the official
        // AsyncHTTPClient transport.
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        // The generated client: `Client`, `Operations` and `Components`, made at build time from
        // openapi.yaml and openapi-generator-config.yaml.
        .target(
            name: "HTTPBinAPI",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        // The generated client through MoyaTransport against AsyncHTTPClientTransport: requests
        // per second, CPU per request and the memory of a long streamed response
        // (Benchmarks/README.md, "OpenAPITransportBench"). Run it with `swift run -c release`.
        .executableTarget(
            name: "OpenAPITransportBench",
            dependencies: [
                "HTTPBinAPI",
                .product(name: "Moya", package: "Moya"),
                .product(name: "MoyaOpenAPI", package: "Moya"),
                .product(name: "MoyaTesting", package: "Moya"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        // `swift test`: the client through MoyaTransport against httpbin (MOYA_HTTPBIN_URL) and
        // against MoyaTesting's mock server, and side by side with AsyncHTTPClientTransport.
        .testTarget(
            name: "OpenAPIClientTests",
            dependencies: [
                "HTTPBinAPI",
                .product(name: "Moya", package: "Moya"),
                .product(name: "MoyaOpenAPI", package: "Moya"),
                .product(name: "MoyaTesting", package: "Moya"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        // The Swift examples of the article "Generated OpenAPI Clients" (Moya's DocC catalog),
        // compiled against the generated client by Moya's DocExamples plugin; the Moya package
        // cannot compile them, having no generated client.
        .testTarget(
            name: "DocExamplesTests",
            dependencies: [
                "HTTPBinAPI",
                .product(name: "Moya", package: "Moya"),
                .product(name: "MoyaOpenAPI", package: "Moya"),
                .product(name: "MoyaTesting", package: "Moya"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            plugins: [.plugin(name: "DocExamples", package: "Moya")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
