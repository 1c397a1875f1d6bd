// The Moya side of Comparisons/memory-bench.sh: a program that links `Moya` and uses a default
// `MoyaProvider` through the async API, as a user's program would, so that its resident memory
// beyond MemoryBenchAHC's is what a user pays for Moya.
//
//     MemoryBenchMoya get [requests] [concurrency]    GET / `requests` times, `concurrency` at a time
//     MemoryBenchMoya download [path]                 one download of `path` to a temporary file
//
// The server is MEMORY_BENCH_URL (default http://127.0.0.1:8089, the nginx of the script). At the
// end the program prints its peak and current resident memory (MemoryReport).
import Foundation
import MemoryBenchSupport
import Moya

/// The server of the run.
let arguments: MemoryBenchArguments = {
    guard let arguments = MemoryBenchArguments(CommandLine.arguments) else {
        print("usage: MemoryBenchMoya get [requests] [concurrency] | download [path]")
        exit(2)
    }
    return arguments
}()

/// `GET /`, or a download of `path` to `file`.
enum Target: TargetType {
    case root
    case download(path: String, file: URL)

    static let server = URL(string: arguments.server)!

    var baseURL: URL { Target.server }
    var path: String {
        switch self {
        case .root: "/"
        case .download(let path, _): path
        }
    }
    var method: Moya.Method { .get }
    var task: Moya.Task {
        switch self {
        case .root: .requestPlain
        case .download(_, let file): .downloadDestination { _, _ in (file, [.removePreviousFile]) }
        }
    }
    var headers: [String: String]? { nil }
}

MemoryReport.step("start")
let label: String
let started: Double
do {
    // With MEMORY_BENCH_FIXED_HEADERS set, the provider's session is made with headers of the
    // program's own, so that `Session.defaultHTTPHeaders` (the User-Agent worked out from the
    // system, Accept-Language from the locale) is never built: what those cost.
    let fixedHeaders = getenv("MEMORY_BENCH_FIXED_HEADERS") != nil
    if MemoryReport.printsSteps {
        // What making a provider costs, part by part: Foundation's first use (the server's URL,
        // which every request needs anyway), the default headers (User-Agent,
        // Accept-Language), the rest of a default configuration, then the session.
        _ = Target.server.absoluteString
        MemoryReport.step("first URL")
        if !fixedHeaders {
            _ = Session.defaultHTTPHeaders
            MemoryReport.step("default headers")
            _ = Session.Configuration()
            MemoryReport.step("configuration")
            _ = Session.default
            MemoryReport.step("session")
        }
    }
    let provider =
        fixedHeaders
        ? MoyaProvider<Target>(
            session: Session(configuration: .init(headers: ["Accept-Encoding": "gzip;q=1.0, deflate;q=0.9", "User-Agent": "MemoryBenchMoya"]))
        )
        : MoyaProvider<Target>()
    MemoryReport.step("client")
    started = monotonicSeconds()
    switch arguments.workload {
    case .get(let requests, let concurrency):
        label = "moya get \(requests) c\(concurrency)"
        if MemoryReport.printsSteps {
            _ = try await provider.request(.root)
            MemoryReport.step("first request")
        }
        try await runWorkers(total: requests, concurrency: concurrency) {
            let response = try await provider.request(.root)
            guard response.statusCode == 200 else { fatalError("GET / answered \(response.statusCode)") }
        }
    case .download(let path):
        label = "moya download \(path)"
        let file = URL(fileURLWithPath: MemoryBenchArguments.temporaryFile())
        defer { MemoryBenchArguments.remove(file.path) }
        let response = try await provider.request(.download(path: path, file: file))
        guard response.statusCode == 200 else { fatalError("GET \(path) answered \(response.statusCode)") }
    }
}
let seconds = monotonicSeconds(since: started)
MemoryReport.step("end")
MemoryReport.saveMappingsIfAsked()
print("\(label) \(MemoryReport().line) seconds \(seconds)")
