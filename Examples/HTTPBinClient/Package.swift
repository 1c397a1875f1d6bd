// swift-tools-version:6.2
// A command-line client for an httpbin server, built on Moya. Copy this folder into a project of
// your own and replace `.package(name: "Moya", path: "../..")` with the Moya package's URL and version.
import PackageDescription

let package = Package(
    name: "HTTPBinClient",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Moya", path: "../..")
    ],
    targets: [
        // The API (the targets, the retry policy, the plugins), so that the tests can use it too.
        .target(
            name: "HTTPBinKit",
            dependencies: [
                .product(name: "Moya", package: "Moya")
            ]
        ),
        // The program: `swift run HTTPBinClient [base URL]`.
        .executableTarget(
            name: "HTTPBinClient",
            dependencies: [
                "HTTPBinKit",
                .product(name: "Moya", package: "Moya"),
            ]
        ),
        // `swift test`: the API against MoyaTesting's mock server, no httpbin needed.
        .testTarget(
            name: "HTTPBinClientTests",
            dependencies: [
                "HTTPBinKit",
                .product(name: "Moya", package: "Moya"),
                .product(name: "MoyaTesting", package: "Moya"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
