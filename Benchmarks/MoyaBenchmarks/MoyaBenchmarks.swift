import Benchmark
import Foundation
import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Microbenchmarks of the pure parts of Moya: URL building, parameter encoding, the
// endpoint → URLRequest conversion, multipart encoding, endpoint hashing for in-flight merging,
// response mapping, and an immediately stubbed request through the whole provider pipeline.
// Public API only.
//
// Run with `swift package benchmark` from this folder. The table reports per operation:
// throughput (operations per second), wall clock time, and the number of mallocs. Operations
// under a few microseconds repeat 1,000 times per iteration (`scalingFactor: .kilo`, the
// default below); slower ones run once per iteration (`slow`), which gives many more samples
// in the same time, and the harness adds about 140 ns and no malloc to each iteration. No
// thresholds are set, and CI only builds this package: timings are for comparing before and
// after a change on one machine, never a pass/fail gate.

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        warmupIterations: 1,
        scalingFactor: .kilo,
        // About a second each: the whole suite runs in well under a minute once built.
        maxDuration: .seconds(1),
        maxIterations: 1_000,
        // No thresholds: nothing here is a pass/fail check.
        thresholds: [:]
    )

    urlBenchmarks()
    encodingBenchmarks()
    endpointBenchmarks()
    multipartBenchmarks()
    hashingBenchmarks()
    responseBenchmarks()
    pipelineBenchmarks()
}

/// The configuration of operations of ten microseconds or more: one per iteration, the rest as
/// in the default configuration (read when this is, after `benchmarks` has set it).
var slow: Benchmark.Configuration { .init(scalingFactor: .one, maxIterations: 10_000) }

// MARK: - 1. URL building

/// `URL(target:)`: the target's `baseURL` with its `path` appended, directly and through a
/// `MultiTarget`.
func urlBenchmarks() {
    let target = Fixtures.parametersTarget()
    let multiTarget = MultiTarget(target)

    Benchmark("URL(target:)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(URL(target: target))
        }
    }

    Benchmark("URL(target:) MultiTarget") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(URL(target: multiTarget))
        }
    }
}

// MARK: - 2. Parameter encoding

/// The encodings writing the nested dictionary of `Fixtures.nestedParameters()` into a plain
/// `URLRequest`: into the query of a GET (`URLEncoding.default`), into the query of a POST
/// (`URLEncoding.queryString`), and, for comparison, as a JSON body (`JSONEncoding.default`).
func encodingBenchmarks() {
    let parameters = Fixtures.nestedParameters()
    let get = Fixtures.request(method: .get)
    let post = Fixtures.request(method: .post)

    Benchmark("URLEncoding.default nested GET", configuration: slow) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? URLEncoding.default.encode(get, with: parameters))
        }
    }

    Benchmark("URLEncoding.queryString nested POST", configuration: slow) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? URLEncoding.queryString.encode(post, with: parameters))
        }
    }

    Benchmark("JSONEncoding.default nested POST", configuration: slow) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? JSONEncoding.default.encode(post, with: parameters))
        }
    }
}

// MARK: - 3. Endpoint and URLRequest

/// The provider's first two steps: `defaultEndpointMapping(for:)` (target → `Endpoint`, which
/// builds the URL string), `Endpoint.urlRequest()` (endpoint → `URLRequest`, with the nested
/// parameters URL-encoded into the query), and both in a row as the provider does them.
func endpointBenchmarks() {
    let target = Fixtures.parametersTarget()
    let endpoint = MoyaProvider<BenchTarget>.defaultEndpointMapping(for: target)

    Benchmark("defaultEndpointMapping(for:)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(MoyaProvider<BenchTarget>.defaultEndpointMapping(for: target))
        }
    }

    Benchmark("Endpoint.urlRequest() requestParameters", configuration: slow) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? endpoint.urlRequest())
        }
    }

    Benchmark("target → endpoint → urlRequest()", configuration: slow) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? MoyaProvider<BenchTarget>.defaultEndpointMapping(for: target).urlRequest())
        }
    }
}

// MARK: - 4. Multipart encoding

/// A four-part form (two text fields, a JSON part, a 4 KiB file part) encoded into one `Data`
/// with `RequestMultipartFormData.encode()`. The parts are appended as Moya appends a
/// `MultipartFormData`'s `.data` parts (the provider's own conversion is internal; it streams
/// the same bytes instead of calling `encode()`).
func multipartBenchmarks() {
    let form = Fixtures.multipartForm()

    Benchmark("RequestMultipartFormData encode() 4 parts", configuration: slow) { benchmark in
        for _ in benchmark.scaledIterations {
            let encoder = RequestMultipartFormData(boundary: form.boundary)
            for part in form.parts {
                if case .data(let data) = part.provider {
                    encoder.append(data, withName: part.name, fileName: part.fileName, mimeType: part.mimeType)
                }
            }
            blackHole(try? encoder.encode())
        }
    }
}

// MARK: - 5. Endpoint hashing (in-flight merging)

/// With `trackInflights`, the provider keys its in-flight requests by `Endpoint`: a hash and,
/// on a hit, an equality check. Both build the endpoint's request to compare what would be sent,
/// so they cost about one `urlRequest()` per endpoint. `==` is measured on two distinct but equal
/// endpoints (the identical-instance shortcut would measure nothing), and the lookup is a
/// dictionary hit as when a second identical request arrives. An upload endpoint builds no body,
/// but hashes its form instead (here the four parts of section 4, 4 KiB of them in memory).
func hashingBenchmarks() {
    let target = Fixtures.parametersTarget()
    let endpoint = MoyaProvider<BenchTarget>.defaultEndpointMapping(for: target)
    let twin = MoyaProvider<BenchTarget>.defaultEndpointMapping(for: target)
    let inflight: [Endpoint: Int] = [endpoint: 1]
    let formEndpoint = Endpoint(
        url: URL(target: target).absoluteString, sampleResponseClosure: { .networkResponse(200, Data()) },
        method: .post, task: .uploadMultipartFormData(Fixtures.multipartForm()), httpHeaderFields: nil)

    Benchmark("Endpoint.hashValue requestParameters", configuration: slow) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(endpoint.hashValue)
        }
    }

    Benchmark("Endpoint == (equal, distinct instances)", configuration: slow) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(endpoint == twin)
        }
    }

    Benchmark("in-flight lookup [Endpoint: _] hit", configuration: slow) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(inflight[twin])
        }
    }

    Benchmark("Endpoint.hashValue multipart upload", configuration: slow) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(formEndpoint.hashValue)
        }
    }
}

// MARK: - 6. Response mapping

/// Mapping a 200 response with a ~1 KiB JSON body: status filtering, `mapString()`, `mapJSON()`,
/// and `map(_:)` to a `Decodable` (with the snake_case decoder the body needs, created once, as
/// an app would); and at a key path, `map(_:atKeyPath:)` of the nested owner object and
/// `mapString(atKeyPath:)` of one of its strings.
func responseBenchmarks() {
    let response = Fixtures.jsonResponse()
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    precondition((try? response.map(Repository.self, using: decoder)) != nil, "the fixture does not decode")
    precondition((try? response.map(Repository.Owner.self, atKeyPath: "owner", using: decoder)) != nil, "the owner does not decode")
    precondition((try? response.mapString(atKeyPath: "owner.login")) == "Moya", "the owner's login is not found")

    Benchmark("Response.filterSuccessfulStatusCodes()") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? response.filterSuccessfulStatusCodes())
        }
    }

    Benchmark("Response.mapString() 1 KiB") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? response.mapString())
        }
    }

    Benchmark("Response.mapJSON() 1 KiB", configuration: slow) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? response.mapJSON())
        }
    }

    Benchmark("Response.map(Decodable) 1 KiB", configuration: slow) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? response.map(Repository.self, using: decoder))
        }
    }

    Benchmark("Response.map(Decodable, atKeyPath:) 1 KiB", configuration: slow) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? response.map(Repository.Owner.self, atKeyPath: "owner", using: decoder))
        }
    }

    Benchmark("Response.mapString(atKeyPath:) 1 KiB", configuration: slow) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? response.mapString(atKeyPath: "owner.login"))
        }
    }
}

// MARK: - 7. Stubbed request through the provider

/// Counts what it sees, so the benchmark can check that every stubbed request completed.
/// `@unchecked Sendable`: it is only used from the benchmark's one thread, because immediate
/// stubs with no callback queue complete synchronously.
final class CountingPlugin: PluginType, @unchecked Sendable {
    var prepared = 0
    var received = 0

    func prepare(_ request: URLRequest, target: TargetType) -> URLRequest {
        prepared += 1
        return request
    }

    func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
        received += 1
    }
}

/// `MoyaProvider.request` with `immediatelyStub`, two plugins and no callback queue, so the
/// completion runs before `request` returns: endpoint mapping, request mapping, plugins, the
/// stub and the completion, everything but the network. The same set-up as `MoyaBench`'s stub
/// workload (`swift run -c release MoyaBench --only stubs`), plus a variant with
/// `trackInflights`, which adds the endpoint hashing of section 5.
func pipelineBenchmarks() {
    let target = BenchTarget(
        baseURL: URL(string: "https://api.example.com")!, path: "/users/42", method: .get,
        task: .requestParameters(parameters: ["page": 2, "sort": "name"], encoding: URLEncoding.default),
        headers: nil)

    for trackInflights in [false, true] {
        let plugin = CountingPlugin()
        let provider = MoyaProvider<BenchTarget>(
            stubClosure: MoyaProvider.immediatelyStub,
            plugins: [plugin, NetworkActivityPlugin { _, _ in }],
            trackInflights: trackInflights)
        let name = trackInflights ? "stubbed request, 2 plugins, trackInflights" : "stubbed request, 2 plugins"
        Benchmark(name, configuration: slow) { benchmark in
            // The plugin counts completions, so the completion captures nothing (a captured
            // counter would add a heap box to each iteration).
            let before = plugin.received
            for _ in benchmark.scaledIterations {
                provider.request(target) { result in
                    blackHole(result)
                }
            }
            benchmark.stopMeasurement()
            if plugin.received - before != benchmark.scaledIterations.count {
                benchmark.error("stubbed requests did not all complete synchronously")
            }
        }
    }
}
