import Foundation
import NIOHTTP1

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response's status code at once, and its Foundation `HTTPURLResponse` built on first use.
///
/// Building an `HTTPURLResponse` (a header dictionary, Foundation's header sanitising, a URL
/// copy) costs more than the rest of a response's handling together, and most callers only
/// look at the status code; so ``Response/response`` builds it when someone asks, once.
final class DeferredHTTPURLResponse: ReceivedResponseHead {
    /// What the response is built from, and then what was built. One state behind one lock, so
    /// that a response costs two allocations (this object and its lock), not a closure more.
    private enum State {
        case head(HTTPResponseHead, URL)
        case make(@Sendable () -> HTTPURLResponse?)
        case built(HTTPURLResponse?)
    }

    /// The HTTP status code.
    let statusCode: Int
    /// The head the response was received with, headers as sent (repeated ones apart, which
    /// `Set-Cookie` needs), for the cookie jar and the HTTP cache; `nil` for a response built
    /// otherwise.
    let head: HTTPResponseHead?
    private let state: Protected<State>

    /// - Parameters:
    ///   - statusCode: The status code, known without building anything.
    ///   - make:       Builds the Foundation response; called at most once.
    init(statusCode: Int, make: @escaping @Sendable () -> HTTPURLResponse?) {
        self.statusCode = statusCode
        self.head = nil
        self.state = Protected(.make(make))
    }

    /// The response to `head`, received from `url`; the Foundation response is built on demand.
    init(head: HTTPResponseHead, url: URL) {
        self.statusCode = Int(head.status.code)
        self.head = head
        self.state = Protected(.head(head, url))
    }

    /// The head's fields as received, or `nil` for a response made by `make`.
    var receivedHeaderFields: [HTTPHeader]? {
        head.map { head in head.headers.map { HTTPHeader(name: $0.name, value: $0.value) } }
    }

    /// The value of the field `name` (any case) as received, the first of several; `nil` without
    /// one, or for a response made by `make`.
    func field(_ name: String) -> String? {
        head?.headers.first(name: name)
    }

    /// The Foundation response, built on first access.
    var value: HTTPURLResponse? {
        state.withLock { state in
            let response: HTTPURLResponse?
            switch state {
            case .built(let built): return built
            case .head(let head, let url): response = HTTPURLResponse.make(head: head, url: url)
            case .make(let make): response = make()
            }
            state = .built(response)
            return response
        }
    }
}

extension HTTPURLResponse {
    /// Builds a Foundation response from an HTTP response head; repeated headers are joined
    /// with `", "`.
    static func make(head: HTTPResponseHead, url: URL) -> HTTPURLResponse? {
        var fields: [String: String] = [:]
        for (name, value) in head.headers {
            if let existing = fields[name] {
                fields[name] = existing + ", " + value
            } else {
                fields[name] = value
            }
        }
        let version = "HTTP/\(head.version.major).\(head.version.minor)"
        return TransportHTTPURLResponse(url: url, statusCode: Int(head.status.code), httpVersion: version, headerFields: fields)
    }
}
