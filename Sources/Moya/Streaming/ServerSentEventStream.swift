import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Server-Sent Events from a target, across reconnections: the sequence that
/// ``MoyaProvider/events(_:reconnection:options:)`` returns.
///
/// Each iteration connects on its first `next()`, parses the `text/event-stream` body, and
/// when the stream ends or fails, reconnects as its ``ReconnectionPolicy`` says, sending the
/// last event ID as `Last-Event-ID`. The events of every connection come out in order, as one
/// sequence; an event that a connection cut off before its end is dropped, as the standard
/// says. It ends on a 204 (No Content) response, or when the policy gives up.
///
/// A response whose content type is not `text/event-stream` throws
/// `MoyaError.underlying(StreamingError.notAnEventStream(contentType:), nil)`; one without a
/// content type (a stub's `.networkResponse`) is read as an event stream. Leaving the loop
/// or cancelling the task closes the connection (or stops a wait to reconnect).
public struct ServerSentEventStream: AsyncSequence, Sendable {
    /// An event.
    public typealias Element = ServerSentEvent
    /// What iteration throws.
    public typealias Failure = MoyaError

    /// Opens one connection, with extra header fields.
    typealias Connect = @Sendable (_ headers: [String: String]) async throws(MoyaError) -> StreamedResponse

    let connect: Connect
    let policy: ReconnectionPolicy
    let options: StreamOptions
    /// Called as each wait to reconnect begins, with its length in seconds: for tests, which
    /// cannot otherwise tell that the iteration has reached the wait.
    var willWaitToReconnect: (@Sendable (_ delay: TimeInterval) -> Void)?
    /// Asked before each connection, told whether it is a reconnection: the session's retry
    /// budget, which the first connection refills and each reconnection draws from. `false`
    /// ends the sequence instead of reconnecting (with the last connection's error, if it
    /// failed). `nil` for no budget.
    var budget: (@Sendable (_ reconnecting: Bool) -> Bool)?

    /// Iterates the events, connecting on the first `next()`.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: self)
    }

    /// Iterates the events of a ``ServerSentEventStream``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// An event.
        public typealias Element = ServerSentEvent
        /// What iteration throws.
        public typealias Failure = MoyaError

        private let stream: ServerSentEventStream
        /// One parser for every connection: it keeps the last event ID and the server's retry
        /// time across them.
        private var parser: ServerSentEventParser
        private var chunks: ResponseChunks.AsyncIterator?
        private var pending: [ServerSentEvent] = []
        private var nextIndex = 0
        private var connections = 0
        /// Reconnections that failed in a row: an error, or a stream without an event.
        private var failures = 0
        /// Whether the current connection delivered an event.
        private var deliveredEvent = false
        private var isDone = false
        /// How the last connection ended: its error, or `nil` when it ended cleanly.
        private var lastError: MoyaError?

        init(stream: ServerSentEventStream) {
            self.stream = stream
            self.parser = ServerSentEventParser(
                maximumLineLength: Swift.max(1, stream.options.maximumLineLength), maximumEventSize: Swift.max(1, stream.options.maximumEventSize))
        }

        /// The last event ID received, sent as `Last-Event-ID` when reconnecting.
        public var lastEventID: String { parser.lastEventID }

        /// The next event, or `nil` when the sequence has ended.
        nonisolated(nonsending)
            public mutating func next() async throws(MoyaError) -> ServerSentEvent?
        {
            while true {
                if nextIndex < pending.count {
                    deliveredEvent = true
                    defer { nextIndex += 1 }
                    return pending[nextIndex]
                }
                guard !isDone else { return nil }
                pending.removeAll(keepingCapacity: true)
                nextIndex = 0
                guard chunks != nil else {
                    try await openConnection()
                    continue
                }
                let chunk: Data?
                do {
                    chunk = try await chunks!.next()
                } catch {
                    chunks = nil
                    parser.finish()
                    if error.isCancelled {
                        isDone = true
                        throw error
                    }
                    try endOfConnection(error: error)
                    continue
                }
                guard let chunk else {
                    chunks = nil
                    parser.finish()
                    try endOfConnection(error: nil)
                    continue
                }
                do {
                    try parser.parse(chunk, into: &pending)
                } catch {
                    chunks?.stop()
                    chunks = nil
                    isDone = true
                    throw MoyaError.underlying(error, nil)
                }
            }
        }

        /// The next event, or `nil` when the sequence has ended.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(MoyaError) -> ServerSentEvent? {
            try await next()
        }

        /// Connects (after the policy's wait, for a reconnection). A failure counts against the
        /// policy, or ends the sequence when it is not one to reconnect after.
        nonisolated(nonsending)
            private mutating func openConnection() async throws(MoyaError)
        {
            if connections > 0 {
                let delay = stream.policy.delay(serverRetry: parser.reconnectionTime, failures: Swift.max(0, failures - 1))
                if delay > 0 {
                    stream.willWaitToReconnect?(delay)
                    try? await _Concurrency.Task.sleep(nanoseconds: UInt64(Swift.min(delay, 86_400) * 1_000_000_000))
                }
                if _Concurrency.Task.isCancelled {
                    isDone = true
                    throw MoyaError.requestCancelled
                }
            }
            if let budget = stream.budget, !budget(connections > 0) {
                isDone = true
                if let lastError { throw lastError }
                return
            }
            connections += 1
            deliveredEvent = false
            let lastEventID = parser.lastEventID
            let response: StreamedResponse
            do {
                response = try await stream.connect(lastEventID.isEmpty ? [:] : ["Last-Event-ID": lastEventID])
            } catch {
                if case .statusCode(let rejected) = error, rejected.statusCode == 204 {
                    isDone = true
                    return
                }
                if error.isCancelled || error.response != nil {
                    // A status the target rejects is final, as the standard's "fail the
                    // connection".
                    isDone = true
                    throw error
                }
                try endOfConnection(error: error)
                return
            }
            if response.statusCode == 204 {
                response.cancel()
                isDone = true
                return
            }
            let contentType = response.response.value(forHTTPHeaderField: "Content-Type")
            guard Self.isEventStream(contentType) else {
                response.cancel()
                let error = MoyaError.underlying(StreamingError.notAnEventStream(contentType: contentType), nil)
                isDone = true
                throw error
            }
            chunks = response.body.makeAsyncIterator()
        }

        /// A connection ended, with `error` or cleanly: whether the sequence reconnects.
        private mutating func endOfConnection(error: MoyaError?) throws(MoyaError) {
            lastError = error
            failures = deliveredEvent ? 0 : failures + 1
            if let limit = stream.policy.maximumAttempts, failures > limit || (limit == 0) {
                isDone = true
                if let error { throw error }
            }
        }

        /// Whether `contentType` is `text/event-stream` (parameters and case aside), or absent
        /// (a stub's `.networkResponse` has no headers).
        static func isEventStream(_ contentType: String?) -> Bool {
            guard let contentType else { return true }
            let mediaType = contentType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
            return mediaType.trimmingCharacters(in: .whitespaces).lowercased() == "text/event-stream"
        }
    }
}
