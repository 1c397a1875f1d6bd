/// Thread-safe, append-only (until reset) list of requests seen by a ``TestServer``.
///
/// Shared by the server object and all of its connection handlers; all state lives in a single
/// ``LockedValue``.
final class RequestLog: Sendable {
    private let storage = LockedValue<[TestServer.RecordedRequest]>([])
    private let counters = LockedValue<[String: Int]>([:])
    private let connections = LockedValue(0)

    /// Counts one more accepted connection.
    func countConnection() {
        self.connections.withLock { $0 += 1 }
    }

    /// How many connections were accepted so far.
    var connectionCount: Int {
        self.connections.withLock { $0 }
    }

    /// Counts one more request for `key` (the `/flaky` route) and returns the new count.
    func increment(_ key: String) -> Int {
        self.counters.withLock { counters in
            counters[key, default: 0] += 1
            return counters[key]!
        }
    }

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
