import MoyaTesting

/// Thread-safe, append-only (until reset) list of requests seen by a ``TestServer``, with tasks
/// waiting for the Nth: MoyaTesting's journal of a mock server, holding ``TestServer/RecordedRequest``s.
///
/// Shared by the server object and all of its connection handlers.
final class RequestLog: Sendable {
    private let storage = RequestJournal<TestServer.RecordedRequest>()
    private let counters = LockedValue<[String: Int]>([:])
    /// Counts one more request for `key` (the `/flaky` route) and returns the new count.
    func increment(_ key: String) -> Int {
        self.counters.withLock { counters in
            counters[key, default: 0] += 1
            return counters[key]!
        }
    }

    /// Appends a request to the log.
    func append(_ request: TestServer.RecordedRequest) {
        self.storage.record(request)
    }

    /// A snapshot of all requests, in arrival order.
    var all: [TestServer.RecordedRequest] {
        self.storage.requests
    }

    /// Forgets all recorded requests.
    func removeAll() {
        self.storage.reset()
    }

    /// Waits until `count` requests were recorded; see `MockServer.waitForRequests(count:timeout:)`.
    func wait(for count: Int, timeout: Duration) async throws -> [TestServer.RecordedRequest] {
        try await self.storage.wait(for: count, timeout: timeout)
    }
}
