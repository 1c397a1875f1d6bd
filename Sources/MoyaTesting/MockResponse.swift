import Foundation

/// What a ``MockServer`` answers to one request: a status, headers and a body, sent at once or
/// in timed pieces, or a deliberate fault.
///
/// ```swift
/// let server = try await MockServer.start()
/// server.enqueue(
///     .json(#"{"id": 1}"#),
///     .status(503, headers: [("Retry-After", "1")]),
///     .stream(["first ", "second"], interval: .milliseconds(50)),
///     .fault(.resetMidBody(afterBytes: 100))
/// )
/// ```
public struct MockResponse: Sendable {
    /// A way to break the exchange on purpose.
    public enum Fault: Sendable, Equatable {
        /// The connection closes once the request has arrived, before any byte of a response
        /// (over HTTP/2, the stream is reset).
        case closeBeforeResponse
        /// The head announces the whole body by `Content-Length`; after `afterBytes` of it the
        /// connection is reset (TCP RST).
        case resetMidBody(afterBytes: Int)
        /// Nothing more is sent after `afterBytes` body bytes (`nil`: not even the head), and the
        /// connection stays open: the client's timeouts must end the exchange.
        case stall(afterBytes: Int?)
        /// The head says `Content-Length: declared`, the body is sent as it is, then the
        /// connection closes: a short body when `declared` is larger, extra bytes when smaller
        /// (HTTP/1.1 only).
        case wrongContentLength(declared: Int)
    }

    /// The status code.
    public var status: Int
    /// The headers, in order. `Content-Length` (or `Transfer-Encoding: chunked` for a body in
    /// ``chunks``) is added unless one is given.
    public var headers: [(name: String, value: String)]
    /// The body, sent in one write when ``chunks`` is `nil`.
    public var body: Data
    /// The body as separate, flushed writes, ``delayBetweenChunks`` apart, framed as
    /// `Transfer-Encoding: chunked` unless ``headers`` give a `Content-Length`.
    public var chunks: [Data]?
    /// How long the server waits before sending the head.
    public var delayBeforeHead: Duration
    /// How long the server waits before each chunk of ``chunks`` (counted from the end of the
    /// previous write).
    public var delayBetweenChunks: Duration
    /// The fault to commit, or `nil` for a well-formed response.
    public var fault: Fault?

    /// Creates a response of `status`, `headers` and `body`.
    public init(status: Int = 200, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
        self.chunks = nil
        self.delayBeforeHead = .zero
        self.delayBetweenChunks = .zero
        self.fault = nil
    }

    /// The whole body, ``chunks`` joined when there are any.
    public var bodyBytes: Data {
        self.chunks.map { $0.reduce(into: Data()) { $0.append($1) } } ?? self.body
    }

    /// The first value of the header `name` (any case), or `nil`.
    public func header(_ name: String) -> String? {
        self.headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// A response with `status`, `headers` and no body.
    public static func status(_ status: Int, headers: [(name: String, value: String)] = []) -> MockResponse {
        MockResponse(status: status, headers: headers)
    }

    /// A `text/plain; charset=utf-8` response.
    public static func text(_ text: String, status: Int = 200, headers: [(name: String, value: String)] = []) -> MockResponse {
        MockResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")] + headers, body: Data(text.utf8))
    }

    /// An `application/json` response whose body is `json`, as written.
    public static func json(_ json: String, status: Int = 200, headers: [(name: String, value: String)] = []) -> MockResponse {
        MockResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: Data(json.utf8))
    }

    /// An `application/json` response whose body is `value`, encoded.
    ///
    /// - Throws: The encoder's error.
    public static func json<Value: Encodable>(
        encoding value: Value,
        status: Int = 200,
        headers: [(name: String, value: String)] = [],
        encoder: JSONEncoder = JSONEncoder()
    ) throws -> MockResponse {
        MockResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: try encoder.encode(value))
    }

    /// A redirect to `location` (absolute, or a path on the same server).
    public static func redirect(to location: String, status: Int = 302) -> MockResponse {
        MockResponse(status: status, headers: [("Location", location)])
    }

    /// A body sent in pieces, `interval` apart, chunked.
    public static func stream(
        _ chunks: [Data],
        interval: Duration = .zero,
        status: Int = 200,
        headers: [(name: String, value: String)] = []
    ) -> MockResponse {
        var response = MockResponse(status: status, headers: headers)
        response.chunks = chunks
        response.delayBetweenChunks = interval
        return response
    }

    /// A text body sent in pieces, `interval` apart, chunked.
    public static func stream(
        _ chunks: [String],
        interval: Duration = .zero,
        status: Int = 200,
        headers: [(name: String, value: String)] = []
    ) -> MockResponse {
        self.stream(chunks.map { Data($0.utf8) }, interval: interval, status: status, headers: headers)
    }

    /// A `text/event-stream` of `events`, each in a write of its own, `interval` apart; the
    /// response ends after the last one.
    public static func events(_ events: [MockServerSentEvent], interval: Duration = .zero, status: Int = 200) -> MockResponse {
        self.stream(
            events.map { Data($0.encoded.utf8) },
            interval: interval,
            status: status,
            headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")]
        )
    }

    /// A response that commits `fault`: a `200` head when the fault sends one, without headers
    /// of its own, over a body of `body` (by default 1 KiB of `a`s). The body matters to
    /// ``Fault/resetMidBody(afterBytes:)`` and ``Fault/stall(afterBytes:)``, which announce all
    /// of it and send its first bytes, and to ``Fault/wrongContentLength(declared:)``, which
    /// sends all of it. To break a response that has its own status, headers and body, use
    /// ``fault(_:)`` on it instead.
    public static func fault(_ fault: Fault, body: Data = Data(repeating: 0x61, count: 1024)) -> MockResponse {
        var response = MockResponse(status: 200, body: body)
        response.fault = fault
        return response
    }

    /// The same response, committing `fault`: its status, headers and body (``bodyBytes``, in
    /// one piece) are what the fault sends part of.
    ///
    /// ```swift
    /// let server = try await MockServer.start()
    /// // A JSON head announcing the whole body, 10 bytes of it, then a TCP reset.
    /// server.enqueue(.json(#"{"id": 1, "name": "Ann"}"#).fault(.resetMidBody(afterBytes: 10)))
    /// ```
    public func fault(_ fault: Fault) -> MockResponse {
        var copy = self
        copy.fault = fault
        return copy
    }

    /// The same response, its head sent `delay` later.
    public func delayed(by delay: Duration) -> MockResponse {
        var copy = self
        copy.delayBeforeHead = delay
        return copy
    }
}
