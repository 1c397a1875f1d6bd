import Foundation
import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A plugin that prints each attempt: `willRetry` runs when an interceptor (here `RetryPolicy`)
/// decides to send a request again, before the backoff wait, with the outcome of the attempt
/// that failed; `willSend` and `didReceive` run once, around all attempts.
public final class RetryReporter: PluginType, @unchecked Sendable {
    // @unchecked Sendable: `retries` is only touched under `lock`.
    private let lock = NSLock()
    private var retries = 0
    private let start = ContinuousClock.now

    public init() {}

    /// How many times the request was sent again.
    public var retryCount: Int { lock.withLock { retries } }

    public func willSend(_ request: RequestType, target: TargetType) {
        print("    attempt 1: \(request.request?.httpMethod ?? "?") \(request.request?.url?.path ?? "?")  (t = \(elapsed))")
    }

    public func willRetry(_ request: URLRequest, after result: Result<Moya.Response, MoyaError>, attempt: Int, target: TargetType) {
        lock.withLock { retries += 1 }
        let outcome: String
        switch result {
        case .success(let response): outcome = "HTTP \(response.statusCode)"
        case .failure(let error): outcome = error.localizedDescription
        }
        print("    attempt \(attempt - 1) got \(outcome): RetryPolicy asks for attempt \(attempt) after its backoff  (t = \(elapsed))")
    }

    public func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
        let outcome: String
        switch result {
        case .success(let response): outcome = "HTTP \(response.statusCode)"
        case .failure(let error): outcome = error.response.map { "HTTP \($0.statusCode)" } ?? error.localizedDescription
        }
        print("    final result: \(outcome)  (t = \(elapsed))")
    }

    private var elapsed: String { formatSeconds(ContinuousClock.now - start) }
}

/// Collects what `NetworkLoggerPlugin` writes, so the program can print it and check it.
public final class LogCollector: @unchecked Sendable {
    // @unchecked Sendable: `lines` is only touched under `lock`.
    private let lock = NSLock()
    private var lines: [String] = []

    public init() {}

    /// Pass this as the logger's `output`: prints each entry, indented, and keeps it.
    public func output(target: TargetType, items: [String]) {
        lock.withLock { lines.append(contentsOf: items) }
        for item in items {
            print("    | " + item.replacingOccurrences(of: "\n", with: "\n    | "))
        }
    }

    /// Everything logged so far, one string.
    public var text: String { lock.withLock { lines.joined(separator: "\n") } }
}

/// A duration as seconds with two decimals, e.g. "1.02 s".
public func formatSeconds(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    return String(format: "%.2f s", Double(seconds) + Double(attoseconds) / 1e18)
}
