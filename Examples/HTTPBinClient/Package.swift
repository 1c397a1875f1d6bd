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
        .executableTarget(
            name: "HTTPBinClient",
            dependencies: [
                .product(name: "Moya", package: "Moya")
            ],
            path: "Sources"
        )
    ],
    swiftLanguageModes: [.v6]
)
