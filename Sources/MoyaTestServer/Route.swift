/// The routes served by ``TestServer``, derived from a request path.
enum Route: Sendable, Equatable {
    case echo
    case status(code: Int?)
    case delay(milliseconds: Int?)
    case bytes(count: Int?)
    case upload
    case echoParts
    case answerAtOnce
    case answerEndsFirst
    case multipart
    case redirect(remaining: Int?)
    case redirectTo
    case redirectLoop
    case gzip
    case deflate
    case json
    case responseHeaders
    case basicAuth(user: String, password: String)
    case bearer
    case drop
    case malformed
    case truncate(count: Int?)
    case headersOnlyThenHang
    case stopReading
    case flaky(key: String)
    case token(expected: String)
    case informational(code: Int?)
    case replay
    case endless
    case events(total: Int?)
    case notFound

    /// Maps path segments (see ``RequestTarget/pathSegments``) to a route.
    init(segments: [String]) {
        func number(_ index: Int) -> Int? {
            segments.count == index + 1 ? Int(segments[index]) : nil
        }
        guard let first = segments.first else {
            self = .notFound
            return
        }
        switch (first, segments.count) {
        case ("echo", _): self = .echo
        case ("status", 2): self = .status(code: number(1))
        case ("delay", 2): self = .delay(milliseconds: number(1))
        case ("bytes", 2): self = .bytes(count: number(1))
        case ("upload", 1): self = .upload
        case ("echo-parts", 1): self = .echoParts
        case ("answer-at-once", 1): self = .answerAtOnce
        case ("answer-ends-first", 1): self = .answerEndsFirst
        case ("multipart", 1): self = .multipart
        case ("redirect", 2): self = .redirect(remaining: number(1))
        case ("redirect-to", 1): self = .redirectTo
        case ("redirect-loop", 1): self = .redirectLoop
        case ("gzip", 1): self = .gzip
        case ("deflate", 1): self = .deflate
        case ("json", 1): self = .json
        case ("response-headers", _): self = .responseHeaders
        case ("basic-auth", 3): self = .basicAuth(user: segments[1], password: segments[2])
        case ("bearer", 1): self = .bearer
        case ("drop", 1): self = .drop
        case ("malformed", 1): self = .malformed
        case ("truncate", 2): self = .truncate(count: number(1))
        case ("headers-only-then-hang", 1): self = .headersOnlyThenHang
        case ("stop-reading", 1): self = .stopReading
        case ("flaky", 2): self = .flaky(key: segments[1])
        case ("token", 2): self = .token(expected: segments[1])
        case ("informational", 2): self = .informational(code: number(1))
        case ("replay", 1): self = .replay
        case ("endless", 1): self = .endless
        case ("events", 2): self = .events(total: number(1))
        default: self = .notFound
        }
    }
}
