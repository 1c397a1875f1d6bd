import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``RetryPolicy`` that records how each attempt ended and what the policy decided.
struct RecordingRetryPolicy: RequestInterceptor {
    let policy: RetryPolicy
    /// For each attempt that ended: its error (`nil` for a response), and whether it was retried.
    let attempts = Recorder<(error: MoyaError?, retried: Bool)>()

    func retry(_ request: URLRequest, dueTo result: Result<Moya.Response, MoyaError>, retryCount: Int) async -> RetryDecision {
        let decision = await policy.retry(request, dueTo: result, retryCount: retryCount)
        let retried: Bool
        if case .doNotRetry = decision { retried = false } else { retried = true }
        if case .failure(let error) = result {
            attempts.append((error, retried))
        } else {
            attempts.append((nil, retried))
        }
        return decision
    }
}

extension NetworkConditionTests {
    @Test(
        "A link that goes down for 3 s and comes back: RetryPolicy retries the timed-out attempts until one succeeds",
        arguments: [false, true])
    func retryRecoversFromOutage(tls: Bool) async throws {
        try Netem.run("clear")
        defer { try? Netem.run("reset") }
        let session = try Netem.session(timeout: 2)
        // Waits of 0.5, 1, 2, 4 and 4 s between six attempts of at most 2 s each: 23.5 s at
        // worst; the second attempt (from 2.5 s) already outlasts the outage.
        let policy = RetryPolicy(retryLimit: 5, exponentialBackoffBase: 2, exponentialBackoffScale: 0.5, jitter: 0, maximumDelay: 4)
        let recorder = RecordingRetryPolicy(policy: policy)
        let provider = MoyaProvider<NetemTarget>(session: session, interceptors: [recorder])
        let target = try NetemTarget.file("hello.txt", tls: tls)
        // A first request opens the connection the next one finds in the pool.
        #expect(try await send(provider, target).get().statusCode == 200)

        // Down before the request starts, back 3 s later.
        try Netem.run("down")
        let back = _Concurrency.Task {
            try await _Concurrency.Task.sleep(for: .seconds(3))
            try Netem.run("up")
        }
        let (result, elapsed) = await timedSend(provider, target)
        try await back.value
        let response = try result.get()
        #expect(response.statusCode == 200)
        #expect(String(decoding: response.data, as: UTF8.self) == "hello\n")
        // Warm-up, then the request: its failed attempts, each retried, and its success.
        let attempts = Array(recorder.attempts.values.dropFirst())
        #expect(attempts.count >= 2, "the request was not retried")
        #expect(attempts.last.map { $0.error == nil && !$0.retried } == true)
        for attempt in attempts.dropLast() {
            #expect((attempt.error?.underlyingError as? URLError)?.code == .timedOut, "\(String(describing: attempt.error))")
            #expect(attempt.retried)
        }
        #expect(elapsed >= .seconds(2.5), "it succeeded once the link was back")
        #expect(elapsed < .seconds(23.5) + Netem.margin)
        try await session.shutdown()
    }
}
