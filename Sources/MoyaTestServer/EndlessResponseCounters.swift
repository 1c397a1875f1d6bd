/// What the `/endless` responses of one ``TestServer`` have done so far, shared by all of its
/// connections.
///
/// Tests read it to check back pressure (a client that stops reading makes the server stop
/// writing) and cancellation (a client that stops iterating closes its connection).
final class EndlessResponseCounters: Sendable {
    private let bytesWritten = LockedValue(0)
    private let openResponses = LockedValue(0)

    /// The body bytes whose write completed, over all `/endless` responses.
    var endlessBytesWritten: Int {
        self.bytesWritten.withLock { $0 }
    }

    /// The `/endless` responses whose connection is still open.
    var openEndlessResponses: Int {
        self.openResponses.withLock { $0 }
    }

    /// Counts `count` more body bytes whose write completed.
    func addWrittenBytes(_ count: Int) {
        self.bytesWritten.withLock { $0 += count }
    }

    /// Counts one more `/endless` response whose connection is open.
    func responseStarted() {
        self.openResponses.withLock { $0 += 1 }
    }

    /// Counts one `/endless` response less: its connection closed.
    func responseClosed() {
        self.openResponses.withLock { $0 -= 1 }
    }
}
