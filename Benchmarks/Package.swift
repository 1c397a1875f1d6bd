// swift-tools-version:6.2
//
// Microbenchmarks of Moya's pure parts (URL building, encoding, mapping, stubbed requests), run with package-benchmark:
//
//     cd Benchmarks && swift package benchmark
//
// and SSEBench, server-sent event parsing against another parser:
//
//     cd Benchmarks && swift run -c release SSEBench
//
// A package of its own, so that the benchmark dependency (and its tools, plugins and malloc
// interposer) never enters the dependency graph of the library's users: they depend on the
// root package, which does not know about this one.
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
        )
    ],
    swiftLanguageModes: [.v6]
)
