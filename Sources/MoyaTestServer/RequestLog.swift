/// Thread-safe, append-only (until reset) list of requests seen by a ``TestServer``.
///
/// Shared by the server object and all of its connection handlers; all state lives in a single
/// ``LockedValue``.
final class RequestLog: Sendable {
    private let storage = LockedValue<[TestServer.RecordedRequest]>([])

    /// Appends a request to the log.
    func append(_ request: TestServer.RecordedRequest) {
        self.storage.withLock { $0.append(request) }
    }

    /// A snapshot of all requests, in arrival order.
    var all: [TestServer.RecordedRequest] {
        self.storage.withLock { $0 }
    }

    /// Forgets all recorded requests.
    func removeAll() {
        self.storage.withLock { $0.removeAll() }
    }
}
