// HTTPBinClient: a command-line client for httpbin, built on Moya.
//
//     swift run HTTPBinClient [base URL]      (default: $HTTPBIN_URL, else https://httpbin.org)
//
// Four steps, each a function below. The API itself (the targets and the retry policy) is in
// Sources/HTTPBinKit/HTTPBinAPI.swift and the two small plugins in Sources/HTTPBinKit/Plugins.swift,
// a library that the tests (Tests/HTTPBinClientTests) use too; the progress bar is in
// ProgressBar.swift, next to this file.

import Foundation
import HTTPBinKit
import Moya

/// A step did not see what it expected; the program exits with status 1.
struct StepFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Prints a step's title and where its code is.
func announce(_ number: Int, _ title: String, function: String, file: String = "Sources/HTTPBinClient/main.swift") {
    print("\nStep \(number): \(title) (\(file), func \(function))")
}

/// The result of one request. `request(_:)` uses typed throws: the error is a `MoyaError`.
func send(_ target: HTTPBin, with provider: MoyaProvider<HTTPBin>) async -> Result<Response, MoyaError> {
    do throws(MoyaError) {
        return .success(try await provider.request(target))
    } catch {
        return .failure(error)
    }
}

// MARK: - Step 1

/// `NetworkLoggerPlugin` logs each request; `AccessTokenPlugin` adds `Authorization: Bearer`
/// to the targets that ask for it. The logger hides the token by default.
func pluginsDemo(baseURL: URL) async throws {
    announce(1, "plugins: NetworkLoggerPlugin and AccessTokenPlugin", function: "pluginsDemo")
    let token = "demo-token-\(UUID().uuidString.prefix(8))"
    let log = LogCollector()
    let provider = MoyaProvider<HTTPBin>(
        endpointClosure: HTTPBin.endpoints(at: baseURL),
        plugins: [
            NetworkLoggerPlugin(configuration: .init(output: log.output, logOptions: .default)),
            AccessTokenPlugin { _ in token },
        ]
    )

    print("  GET /bearer with the token \"\(token)\"; the logger writes:")
    let response: Response
    do throws(MoyaError) {
        response = try await provider.request(.bearer)
    } catch {
        throw StepFailure("GET /bearer with a token failed: \(error.localizedDescription)")
    }
    struct BearerReply: Decodable {
        let authenticated: Bool
        let token: String
    }
    guard let reply = try? response.map(BearerReply.self), reply.authenticated, reply.token == token else {
        throw StepFailure("GET /bearer: the server did not get the token: \(String(decoding: response.data, as: UTF8.self))")
    }
    print("  -> HTTP \(response.statusCode): the server received the token; the log shows it as \"Bearer ***\".")
    guard log.text.contains("Bearer ***"), !log.text.contains(token) else {
        throw StepFailure("the log should show 'Bearer ***' and never the token")
    }

    print("  GET /bearer from a target whose authorizationType is nil (no header is added):")
    switch await send(.bearerWithoutToken, with: provider) {
    case .failure(.statusCode(let response)) where response.statusCode == 401:
        print("  -> MoyaError.statusCode: HTTP 401, as expected (validationType is .successCodes).")
    case .failure(let error):
        throw StepFailure("GET /bearer without a token: expected 401, got \(error.localizedDescription)")
    case .success(let response):
        throw StepFailure("GET /bearer without a token answered \(response.statusCode), expected 401")
    }
}

// MARK: - Step 2

/// Five requests at once from a task group; they finish in any order and are printed in the
/// order they were started. Two of them wait a second on the server, yet the whole group takes
/// about one second, not two.
func concurrencyDemo(baseURL: URL) async throws {
    announce(2, "async/await, several requests at once in a task group", function: "concurrencyDemo")
    let provider = MoyaProvider<HTTPBin>(endpointClosure: HTTPBin.endpoints(at: baseURL))  // shared safely by all the tasks
    let targets: [HTTPBin] = [.echo(name: "alpha"), .delay(seconds: 1), .post(message: "hello"), .delay(seconds: 1), .echo(name: "omega")]
    let start = ContinuousClock.now

    let lines = try await withThrowingTaskGroup(of: (Int, String).self) { group in
        for (index, target) in targets.enumerated() {
            group.addTask {
                let taskStart = ContinuousClock.now
                let response: Response
                do throws(MoyaError) {
                    response = try await provider.request(target)
                } catch {
                    throw StepFailure("\(target.method.rawValue) \(target.path) failed: \(error.localizedDescription)")
                }
                let summary = try summarize(response, of: target)
                let took = formatSeconds(ContinuousClock.now - taskStart)
                return (
                    index,
                    "\(target.method.rawValue.padding(toLength: 4, withPad: " ", startingAt: 0)) \(target.path.padding(toLength: 9, withPad: " ", startingAt: 0)) HTTP \(response.statusCode) in \(took): \(summary)"
                )
            }
        }
        var lines: [(Int, String)] = []
        for try await line in group { lines.append(line) }
        return lines.sorted { $0.0 < $1.0 }.map(\.1)
    }
    for line in lines { print("  " + line) }
    print("  all \(targets.count) in \(formatSeconds(ContinuousClock.now - start)) (one after the other: over 2 s)")
}

/// What the server echoed, checked against what was sent.
func summarize(_ response: Response, of target: HTTPBin) throws -> String {
    struct Echo: Decodable {
        let args: [String: String]?
        let json: [String: String]?
        let url: String
    }
    guard let echo = try? response.map(Echo.self) else {
        throw StepFailure("\(target.path): the body is not httpbin's JSON: \(String(decoding: response.data.prefix(200), as: UTF8.self))")
    }
    switch target {
    case .echo(let name):
        guard echo.args?["name"] == name else { throw StepFailure("/get did not echo name=\(name)") }
        return "args.name = \(name)"
    case .post(let message):
        guard echo.json?["message"] == message else { throw StepFailure("/post did not echo the JSON body") }
        return "json.message = \(message)"
    default:
        return "url = \(echo.url)"
    }
}

// MARK: - Step 3

/// A download streamed to a file, with a live progress bar fed by `requestWithProgress`, an
/// `AsyncSequence` of progress events that ends with the response.
func downloadDemo(baseURL: URL) async throws {
    announce(3, "a download with a progress bar", function: "downloadDemo")
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("HTTPBinClient-\(UUID().uuidString)")
    let destination = directory.appendingPathComponent("drip.bin")
    // The file is only looked at here: remove it, and the folder made for it, however the step ends.
    defer { try? FileManager.default.removeItem(at: directory) }
    let bytes = 4096
    let provider = MoyaProvider<HTTPBin>(endpointClosure: HTTPBin.endpoints(at: baseURL))
    print("  GET /drip: \(bytes) bytes sent slowly over 2 seconds")

    var bar = ProgressBar()
    var final: Response?
    do throws(MoyaError) {
        for try await event in provider.requestWithProgress(.download(bytes: bytes, seconds: 2, destination: destination)) {
            if let progress = event.progressObject {
                bar.update(fraction: event.progress, completed: progress.completedUnitCount, total: progress.totalUnitCount)
            }
            if let response = event.response { final = response }
        }
    } catch {
        bar.finish()
        throw StepFailure("the download failed: \(error.localizedDescription)")
    }
    bar.finish()
    guard let response = final else { throw StepFailure("the download ended without a response") }
    let size = (try? FileManager.default.attributesOfItem(atPath: destination.path))?[.size] as? Int
    guard size == bytes else {
        throw StepFailure("expected \(bytes) bytes at \(destination.path), found \(size.map(String.init) ?? "no file")")
    }
    print("  -> HTTP \(response.statusCode); saved \(bytes) bytes to \(destination.path)")
    print("     (response.data is empty for downloads: the body is in the file, which the demo deletes now)")
}

// MARK: - Step 4

/// `RetryPolicy` sends a request that got 503 again, with exponential backoff. httpbin's
/// /status/503 never recovers, so after `retryLimit` retries the 503 is the result. The policy
/// is `HTTPBin.retryPolicy` (Sources/HTTPBinKit/HTTPBinAPI.swift).
func retryDemo(baseURL: URL) async throws {
    announce(4, "retry with backoff, the RetryPolicy interceptor", function: "retryDemo")
    let policy = HTTPBin.retryPolicy
    let retryLimit = policy.retryLimit
    let reporter = RetryReporter()
    let provider = MoyaProvider<HTTPBin>(endpointClosure: HTTPBin.endpoints(at: baseURL), plugins: [reporter], interceptors: [policy])
    print("  GET /status/503 with RetryPolicy(retryLimit: \(retryLimit)); waits 0.1 s, 0.2 s, 0.4 s:")

    switch await send(.unavailable, with: provider) {
    case .failure(.statusCode(let response)) where response.statusCode == 503:
        break
    case .failure(let error):
        throw StepFailure("GET /status/503: expected a final 503, got \(error.localizedDescription)")
    case .success(let response):
        throw StepFailure("GET /status/503 answered \(response.statusCode)")
    }
    guard reporter.retryCount == retryLimit else {
        throw StepFailure("expected \(retryLimit) retries, saw \(reporter.retryCount)")
    }
    print("  -> still 503 after \(retryLimit) retries: the request fails with MoyaError.statusCode (HTTP 503).")
}

// MARK: - Main

/// The server: the first command-line argument, else `$HTTPBIN_URL`, else https://httpbin.org.
/// Exits with status 2 when that is not an http(s) URL.
func baseURLFromCommandLine() -> URL {
    let arguments = CommandLine.arguments.dropFirst()
    let text = arguments.first ?? ProcessInfo.processInfo.environment["HTTPBIN_URL"] ?? HTTPBin.defaultBaseURL.absoluteString
    guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
        FileHandle.standardError.write(Data("error: '\(text)' is not an http(s) URL\nusage: HTTPBinClient [base URL]\n".utf8))
        exit(2)
    }
    return url
}

let baseURL = baseURLFromCommandLine()
print("HTTPBinClient: Moya against \(baseURL.absoluteString)")
do {
    try await pluginsDemo(baseURL: baseURL)
    try await concurrencyDemo(baseURL: baseURL)
    try await downloadDemo(baseURL: baseURL)
    try await retryDemo(baseURL: baseURL)
    print("\nAll steps passed.")
} catch {
    FileHandle.standardError.write(Data("\nerror: \(error)\n".utf8))
    exit(1)
}
