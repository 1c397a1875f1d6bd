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
final class DeferredHTTPURLResponse: Sendable {
    /// The HTTP status code.
    let statusCode: Int
    private let make: @Sendable () -> HTTPURLResponse?
    private let built = Protected<HTTPURLResponse??>(nil)

    /// - Parameters:
    ///   - statusCode: The status code, known without building anything.
    ///   - make:       Builds the Foundation response; called at most once.
    init(statusCode: Int, make: @escaping @Sendable () -> HTTPURLResponse?) {
        self.statusCode = statusCode
        self.make = make
    }

    /// The Foundation response, built on first access.
    var value: HTTPURLResponse? {
        built.withLock { built in
            if let response = built { return response }
            let response = make()
            built = .some(response)
            return response
        }
    }
}

extension DeferredHTTPURLResponse {
    /// The response to `head`, received from `url`; the Foundation response is built on demand.
    convenience init(head: HTTPResponseHead, url: URL) {
        self.init(statusCode: Int(head.status.code)) { HTTPURLResponse.make(head: head, url: url) }
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
        return HTTPURLResponse(url: url, statusCode: Int(head.status.code), httpVersion: version, headerFields: fields)
    }
}
